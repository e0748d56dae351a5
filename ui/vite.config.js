// The dashboard's build: one entry (index.html), hashed files under
// assets/, nothing inlined (a strict Content-Security-Policy allows only
// files of our own origin: no inline script or style, no data: URLs).
// The output folder is given by the caller (CMake: --outDir <build>/ui).
import { defineConfig } from 'vite';

export default defineConfig({
	base: '/',
	esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
	build: {
		target: 'es2022',
		assetsDir: 'assets',
		assetsInlineLimit: 0,
		cssCodeSplit: false,
		modulePreload: { polyfill: false },
		sourcemap: false,
		reportCompressedSize: false,
		emptyOutDir: true,
	},
});
