package aguipage_test

import (
	"sync"

	"github.com/chromedp/cdproto/runtime"
)

// recordConsole keeps the page's console errors and uncaught exceptions.
func recordConsole(mu *sync.Mutex, errs *[]string, ev any) {
	mu.Lock()
	defer mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		*errs = append(*errs, msg)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			for _, a := range ev.Args {
				*errs = append(*errs, string(a.Value)+a.Description)
			}
		}
	}
}
