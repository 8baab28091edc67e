import Counter from './counter'

export default function Home() {
  return (
    <main className="card">
      <h1>Your Next.js app is running</h1>
      <p>
        This is the starting point of your app. Describe what it should do
        and it will be built here.
      </p>
      <Counter />
      <p className="hint">
        Edit <code>app/page.js</code>: the page reloads as you save.
      </p>
    </main>
  )
}
