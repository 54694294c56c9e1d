// Package browsertest starts the headless Chromium that the tests of
// pages drive (web/, examples/aguipage): a closed network, a fresh
// profile, and a failure rather than a skip under CI=true when there is no
// browser.
package browsertest
