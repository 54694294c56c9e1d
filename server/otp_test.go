package server_test

import (
	"testing"

	"github.com/kindkit/kindkit/internal/servertest"
)

// verify_otp's checks come in PROTOCOL.md §2.9's order; with no OTP
// service, a well-formed request gets otp_invalid NOT_FOUND.
func TestVerifyOTP(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: parkingScript(t)})
	c := dial(t, url)
	sid := create(c, "")
	for _, tc := range []struct {
		frame, requestID, code, message string
	}{
		{`{"action":"verify_otp","sessionId":"` + sid + `","code":"123456"}`, "", "VALIDATION_ERROR", "verify_otp requires a 'requestId'"},
		{`{"action":"verify_otp","requestId":"v","code":"123456"}`, "v", "VALIDATION_ERROR", "verify_otp requires a 'sessionId'"},
		{`{"action":"verify_otp","requestId":"v","sessionId":"` + sid + `"}`, "v", "VALIDATION_ERROR", "verify_otp requires a 'code'"},
		{`{"action":"verify_otp","requestId":"v","sessionId":"` + sid + `","code":""}`, "v", "VALIDATION_ERROR", "verify_otp requires a 'code'"},
		{`{"action":"verify_otp","requestId":"v","sessionId":"nope","code":"123456"}`, "v", "SESSION_NOT_FOUND", "session 'nope' not found"},
	} {
		c.Send(tc.frame)
		ev := c.Expect("error")[0]
		if errorCode(ev) != tc.code || path(ev, "error", "message") != tc.message || (ev["requestId"] != nil) != (tc.requestID != "") {
			t.Errorf("%s: got %v, want %s %q", tc.frame, ev, tc.code, tc.message)
		}
	}
	for _, code := range []string{`"123456"`, `123456`} {
		c.Send(`{"action":"verify_otp","requestId":"v","sessionId":"` + sid + `","code":` + code + `}`)
		ev := c.Expect("otp_invalid")[0]
		if ev["requestId"] != "v" || path(ev, "data", "requestId") != "v" || path(ev, "data", "data", "error") != "NOT_FOUND" || path(ev, "data", "data", "attemptsRemaining") != 0.0 {
			t.Errorf("code %s: got %v", code, ev)
		}
	}
}
