import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

// The sandbox previews port 3000 on every interface; the control plane's
// edge forwards the preview hostname here, so any Host is accepted.
const listen = { host: '0.0.0.0', port: 3000, strictPort: true, allowedHosts: true }

export default defineConfig({
  plugins: [react()],
  server: listen,
  preview: listen,
})
