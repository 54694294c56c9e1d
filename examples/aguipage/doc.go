// Package aguipage is a page built on @ag-ui/client alone (index.html,
// page.js) that talks to kindkit's /agui and draws an interrupt's card from
// its metadata. It has no Go code; its test bundles the page with esbuild
// and drives it in headless Chromium against a real AG-UI handler.
package aguipage
