import './globals.css'

export const metadata = {
  title: 'sandboxd app',
  description: 'A Next.js app',
}

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  )
}
