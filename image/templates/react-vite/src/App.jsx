import { useState } from 'react'

export default function App() {
  const [count, setCount] = useState(0)

  return (
    <main className="card">
      <h1>Your React app is running</h1>
      <p>
        This is the starting point of your app. Describe what it should do
        and it will be built here.
      </p>
      <button onClick={() => setCount((c) => c + 1)}>
        Clicked {count} {count === 1 ? 'time' : 'times'}
      </button>
      <p className="hint">
        Edit <code>src/App.jsx</code>: the page reloads as you save.
      </p>
    </main>
  )
}
