package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path returns the browser to drive: $CHROMIUM_PATH or /usr/bin/chromium
// (scripts/chromium.sh installs it). Without one the test skips, except in
// CI, where it fails.
func Path(t testing.TB) string {
	t.Helper()
	p := os.Getenv("CHROMIUM_PATH")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no chromium at %s (%v): run scripts/chromium.sh", p, err)
		}
		t.Skipf("no chromium at %s (%v): run scripts/chromium.sh", p, err)
	}
	return p
}

// Start starts headless Chromium for the test and stops it (and waits
// for it) when the test ends. The context it returns drives the browser's
// first tab.
func Start(t testing.TB) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // root, in a container
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1024, 800),
		// A closed network: nothing may try to reach out.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser() // closes the browser and waits for its process
		cancelAlloc()
	})
	start := time.Now()
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	t.Logf("chromium started in %v", time.Since(start).Round(time.Millisecond))
	return ctx
}
