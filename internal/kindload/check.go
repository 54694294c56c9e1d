package kindload

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Checker follows one turn of the card flow and tells an order violation
// (the events came, but in an order PROTOCOL.md §4.3 forbids) from an
// error (an event this flow never expects, or one that ends it early).
//
// The order rules:
//   - the 202 ack comes before any other event of the turn;
//   - interaction_required comes before the raise's toolCall chunk;
//   - after the submit, its 200 ack comes before any stream_chunk,
//     stream_token or eventual_response;
//   - the turn has exactly one terminal event, and nothing after it.
//
// Besides, the raise's toolResult after the submit must be the submitted
// payload ({"status":"submitted",…}), not isError and not another outcome
// (no_response, declined): anything else is an error.
//
// Feed it every event read after send_message, and call Submitted when
// submit_interaction has been written. keepalive and pong events are
// skipped, as every client does.
type Checker struct {
	// Turn is the send_message requestId; every event must echo it (the
	// submit reuses it, so its ack does too).
	Turn string
	// InteractionID and Kind are the park's, once interaction_required
	// has been read.
	InteractionID, Kind string
	// Violations lists each rule broken, once per rule, worded by the
	// first event that broke it.
	Violations []string

	acked, parked, called, submitted, submitAcked bool
	terminals                                     int
	broken                                        map[string]bool
}

// ErrEarlyEnd is wrapped by the error that a terminal event read before the
// submit makes.
var ErrEarlyEnd = errors.New("turn ended before the submit")

// violate records that rule was broken, worded by the first event that
// broke it: a rule counts once per turn.
func (c *Checker) violate(rule, format string, args ...any) {
	if c.broken[rule] {
		return
	}
	if c.broken == nil {
		c.broken = map[string]bool{}
	}
	c.broken[rule] = true
	c.Violations = append(c.Violations, fmt.Sprintf(format, args...))
}

// Submitted records that submit_interaction was written.
func (c *Checker) Submitted() { c.submitted = true }

// Parked reports whether both the park event and the raise's toolCall
// chunk have been read: the card can be submitted.
func (c *Checker) Parked() bool { return c.parked && c.called }

// Done reports whether the terminal event has been read.
func (c *Checker) Done() bool { return c.terminals > 0 }

func terminal(ev *Event) bool {
	return ev.Type == "eventual_response" || ev.Type == "cancelled" || ev.Type == "error"
}

// Event takes the next event. It returns an error for an event the flow
// never expects; the flow should stop there. Violations do not stop it.
func (c *Checker) Event(ev *Event) error {
	switch ev.Type {
	case "keepalive", "pong":
		return nil
	}
	if ev.RequestID != c.Turn {
		if ev.Type == "error" && ev.Error != nil {
			return fmt.Errorf("error event %s %q without the turn's requestId", ev.Error.Code, ev.Error.Message)
		}
		return fmt.Errorf("%s with requestId %q, not the turn's", ev.label(), ev.RequestID)
	}
	if c.terminals > 0 {
		if terminal(ev) {
			c.terminals++
			c.violate("terminals", "more than one terminal event (%s after the first)", ev.label())
		} else {
			c.violate("after terminal", "%s after the terminal event", ev.label())
		}
		return nil
	}
	if !c.acked && !(ev.Type == "immediate_response" && ev.Status == 202) {
		c.violate("202 first", "%s before the 202 ack", ev.label())
	}
	if !c.submitted {
		return c.beforeSubmit(ev)
	}
	return c.afterSubmit(ev)
}

func (c *Checker) beforeSubmit(ev *Event) error {
	switch ev.Type {
	case "immediate_response":
		if ev.Status == 202 && !c.acked {
			c.acked = true
			return nil
		}
		return fmt.Errorf("immediate_response %d before the submit", ev.Status)
	case "interaction_required":
		if c.parked {
			return errors.New("a second interaction_required")
		}
		c.parked = true
		c.InteractionID, c.Kind = ev.Data.Data.InteractionID, ev.Data.Data.Kind
		if c.InteractionID == "" {
			return errors.New("interaction_required without an interactionId")
		}
		return nil
	case "stream_chunk":
		raw := ev.Data.State.RawResponse
		switch {
		case raw.ToolCall != nil:
			if !c.parked {
				c.violate("park first", "toolCall stream_chunk before interaction_required")
			}
			c.called = true
			return nil
		case raw.ToolResult != nil:
			return errors.New("toolResult stream_chunk before the submit")
		}
		return errors.New("stream_chunk with neither toolCall nor toolResult")
	case "stream_token":
		if c.parked {
			return errors.New("stream_token while parked")
		}
		return nil
	case "eventual_response", "cancelled", "error":
		c.terminals++
		if ev.Error != nil {
			return fmt.Errorf("%w: error %s %q", ErrEarlyEnd, ev.Error.Code, ev.Error.Message)
		}
		return fmt.Errorf("%w: %s", ErrEarlyEnd, ev.Type)
	}
	return fmt.Errorf("unexpected %s before the submit", ev.label())
}

func (c *Checker) afterSubmit(ev *Event) error {
	if !c.submitAcked {
		switch ev.Type {
		case "stream_chunk", "stream_token", "eventual_response":
			c.violate("ack first", "%s before the submit's 200 ack", ev.label())
		}
	}
	switch ev.Type {
	case "immediate_response":
		if ev.Status == 200 && !c.submitAcked {
			c.submitAcked = true
			return nil
		}
		return fmt.Errorf("immediate_response %d after the submit", ev.Status)
	case "stream_chunk":
		raw := ev.Data.State.RawResponse
		switch {
		case raw.ToolResult != nil:
			if raw.ToolResult.IsError {
				return errors.New("toolResult with isError true")
			}
			if c.Kind != "" && raw.ToolResult.Name == "request_"+c.Kind {
				var p struct {
					Status string `json:"status"`
				}
				if json.Unmarshal([]byte(raw.ToolResult.Result), &p) != nil || p.Status != "submitted" {
					return fmt.Errorf("the raise's toolResult is not the submitted payload (status %q)", p.Status)
				}
			}
			return nil
		case raw.ToolCall != nil:
			return nil
		}
		return errors.New("stream_chunk with neither toolCall nor toolResult")
	case "stream_token":
		return nil
	case "eventual_response":
		c.terminals++
		if ev.Status != 200 {
			return fmt.Errorf("eventual_response with status %d", ev.Status)
		}
		return nil
	case "cancelled", "error":
		c.terminals++
		if ev.Error != nil {
			return fmt.Errorf("turn ended with error %s %q", ev.Error.Code, ev.Error.Message)
		}
		return fmt.Errorf("turn ended with %s", ev.Type)
	case "interaction_invalid":
		return errors.New("interaction_invalid: the submitted values were rejected")
	case "interaction_required":
		return errors.New("a new interaction_required after the submit")
	}
	return fmt.Errorf("unexpected %s after the submit", ev.label())
}
