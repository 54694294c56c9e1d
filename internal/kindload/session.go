package kindload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// session is one user's socket, from dial to close.
type session struct {
	ws        *websocket.Conn
	id        string // requestId prefix
	sessionID string
	convID    string // the conversation the session is bound to
	chk       Checker
}

// stageError says at which step of the flow a session failed.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func failed(stage string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.New("timed out")
	}
	return &stageError{stage, err}
}

// jsonString quotes s for a frame.
func jsonString(s string) string { return strconv.Quote(s) }

func (s *session) write(ctx context.Context, frame string) error {
	return s.ws.Write(ctx, websocket.MessageText, []byte(frame))
}

func (s *session) read(ctx context.Context) (*Event, error) {
	typ, b, err := s.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("binary frame")
	}
	return ParseEvent(b)
}

// dial opens a socket to url for the session whose requestIds start
// with id.
func dial(ctx context.Context, url, id string) (*session, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, failed("dial", err)
	}
	ws.SetReadLimit(1 << 20)
	return &session{ws: ws, id: id}, nil
}

// start creates a session that supports choice_chips and sends a message,
// and returns once the turn is parked: interaction_required and the
// raise's toolCall chunk have been read. It returns the time from writing
// send_message to reading interaction_required.
func (s *session) start(ctx context.Context) (time.Duration, error) {
	create := s.id + "-create"
	if err := s.write(ctx, `{"action":"create_conversation_session","requestId":`+jsonString(create)+
		`,"agentId":"kindload","userName":"kindload","supports":["choice_chips"]}`); err != nil {
		return 0, failed("write create_conversation_session", err)
	}
	for s.sessionID == "" {
		ev, err := s.read(ctx)
		if err != nil {
			return 0, failed("read create_conversation_session reply", err)
		}
		switch {
		case ev.Type == "pong" || ev.Type == "keepalive":
			continue
		case ev.Type == "error" && ev.Error != nil:
			return 0, failed("create_conversation_session", fmt.Errorf("error %s %q", ev.Error.Code, ev.Error.Message))
		case ev.Type != "immediate_response" || ev.RequestID != create || ev.Status != 200:
			return 0, failed("create_conversation_session", fmt.Errorf("got %s %d requestId %q", ev.label(), ev.Status, ev.RequestID))
		case ev.Data.SessionID == "":
			return 0, failed("create_conversation_session", errors.New("reply without a sessionId"))
		}
		s.sessionID, s.convID = ev.Data.SessionID, ev.Data.ConversationID
	}

	s.chk.Turn = s.id + "-turn"
	start := time.Now()
	if err := s.write(ctx, `{"action":"send_message","requestId":`+jsonString(s.chk.Turn)+
		`,"sessionId":`+jsonString(s.sessionID)+`,"message":"Hi, what does it cost?","stream":true}`); err != nil {
		return 0, failed("write send_message", err)
	}
	return s.readUntil(ctx, s.chk.Parked, "interaction_required", start, "wait for the park")
}

// readUntil reads and checks events until done, and returns the time from
// start to the first event of type mark.
func (s *session) readUntil(ctx context.Context, done func() bool, mark string, start time.Time, what string) (time.Duration, error) {
	var lat time.Duration
	for !done() {
		ev, err := s.read(ctx)
		if err != nil {
			return 0, failed(what, err)
		}
		if ev.Type == mark && lat == 0 {
			lat = time.Since(start)
		}
		if err := s.chk.Event(ev); err != nil {
			return 0, failed(what, withFrame(err, ev))
		}
	}
	return lat, nil
}

// resume submits the card and reads up to the eventual_response; with
// tail it then pings and reads up to the pong, so that anything the server
// sends after the terminal event is checked too. It returns the time from
// writing submit_interaction to reading eventual_response.
func (s *session) resume(ctx context.Context, tail bool) (time.Duration, error) {
	kind := s.chk.Kind
	if kind == "" {
		kind = "choices"
	}
	start := time.Now()
	if err := s.write(ctx, `{"action":"submit_interaction","requestId":`+jsonString(s.chk.Turn)+
		`,"sessionId":`+jsonString(s.sessionID)+`,"interactionId":`+jsonString(s.chk.InteractionID)+
		`,"kind":`+jsonString(kind)+
		`,"values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"]}]}}`); err != nil {
		return 0, failed("write submit_interaction", err)
	}
	s.chk.Submitted()
	lat, err := s.readUntil(ctx, s.chk.Done, "eventual_response", start, "wait for eventual_response")
	if err != nil {
		return 0, err
	}
	if tail {
		ping := s.id + "-ping"
		if err := s.write(ctx, `{"action":"ping","requestId":`+jsonString(ping)+`}`); err != nil {
			return 0, failed("write ping", err)
		}
		for {
			ev, err := s.read(ctx)
			if err != nil {
				return 0, failed("wait for pong", err)
			}
			if ev.Type == "pong" && ev.RequestID == ping {
				break
			}
			if err := s.chk.Event(ev); err != nil {
				return 0, failed("after eventual_response", withFrame(err, ev))
			}
		}
	}
	return lat, nil
}

// close ends the socket with a normal closure.
func (s *session) close() {
	if s.ws.Close(websocket.StatusNormalClosure, "bye") != nil {
		s.ws.CloseNow()
	}
}
