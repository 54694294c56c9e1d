package kindload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/cork"
	"github.com/kindkit/kindkit/internal/debugstats"
)

// Canned is the floor: a server that answers the card flow with the bytes
// kindkit's demo model produces and does nothing else. Each connection has
// kindkit's shape (the reader goroutine, and one writer goroutine draining
// an ordered queue in batches, each in one socket write) and keeps only the
// requestId of its open turn. It also serves /debug/stats.
type Canned struct {
	mu      sync.Mutex
	conns   map[*websocket.Conn]struct{}
	closing bool
	wg      sync.WaitGroup
}

// NewCanned returns a canned server; serve it with Serve.
func NewCanned() *Canned { return &Canned{conns: map[*websocket.Conn]struct{}{}} }

// Serve serves ln until ctx ends, then closes every connection and
// returns once all of them are gone.
func (c *Canned) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hs.Shutdown(sctx)
		cancel()
		<-served
	}
	c.mu.Lock()
	c.closing = true
	for ws := range c.conns {
		ws.CloseNow()
	}
	c.mu.Unlock()
	c.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (c *Canned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/ws":
		c.serveWS(w, r)
	case "/debug/stats":
		debugstats.Handler(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (c *Canned) serveWS(w http.ResponseWriter, r *http.Request) {
	cw := &cork.Writer{ResponseWriter: w}
	ws, err := websocket.Accept(cw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.conns[ws] = struct{}{}
	c.wg.Add(1)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.conns, ws)
		c.mu.Unlock()
		c.wg.Done()
	}()
	cc := &cannedConn{ws: ws, sock: cw.Conn, wake: make(chan struct{}, 1), writerDone: make(chan struct{})}
	go cc.writeLoop()
	cc.serve(r.Context())
}

type cannedConn struct {
	ws         *websocket.Conn
	sock       *cork.Conn
	mu         sync.Mutex
	queue      [][]byte
	closed     bool
	wake       chan struct{}
	writerDone chan struct{}
	turn       string // the open turn's requestId; only the reader touches it
}

// cannedFrame is every field a canned reply needs from an action.
type cannedFrame struct {
	Action        string `json:"action"`
	RequestID     string `json:"requestId"`
	SessionID     string `json:"sessionId"`
	AgentID       string `json:"agentId"`
	InteractionID string `json:"interactionId"`
}

func (c *cannedConn) serve(ctx context.Context) {
	defer func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.signal()
		<-c.writerDone
	}()
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.send(errorFrame("", "VALIDATION_ERROR", "binary frames are not supported; send JSON text frames"))
			continue
		}
		var f cannedFrame
		if json.Unmarshal(data, &f) != nil {
			c.send(errorFrame("", "VALIDATION_ERROR", "Invalid JSON frame"))
			continue
		}
		c.reply(&f)
	}
}

func (c *cannedConn) reply(f *cannedFrame) {
	switch f.Action {
	case "create_conversation_session":
		c.send(createdFrame(f.RequestID, f.AgentID))
	case "send_message":
		r := f.RequestID
		if r == "" {
			r = newUUID()
		}
		c.turn = r
		c.send(ack202Frame(r), parkFrame(r, newUUID()), callFrame(r))
	case "submit_interaction":
		if c.turn == "" {
			c.send(errorFrame(f.RequestID, "NO_PENDING_INTERACTION", "no interaction is awaiting submission for session '"+f.SessionID+"'"))
			return
		}
		t := c.turn
		c.turn = ""
		frames := make([][]byte, 0, 3+len(demoTokens))
		frames = append(frames, submittedFrame(f.RequestID, f.SessionID, f.InteractionID), resultFrame(t))
		for _, tok := range demoTokens {
			frames = append(frames, tokenFrame(t, tok))
		}
		frames = append(frames, eventualFrame(t))
		c.send(frames...)
	case "ping":
		c.send(pongFrame(f.RequestID))
	default:
		c.send(errorFrame(f.RequestID, "UNSUPPORTED_ACTION", "Unsupported action '"+f.Action+"'"))
	}
}

// send queues frames, in order, for the writer.
func (c *cannedConn) send(frames ...[]byte) {
	c.mu.Lock()
	if !c.closed {
		c.queue = append(c.queue, frames...)
	}
	c.mu.Unlock()
	c.signal()
}

func (c *cannedConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *cannedConn) writeLoop() {
	defer close(c.writerDone)
	for range c.wake {
		c.mu.Lock()
		batch, closed := c.queue, c.closed
		c.queue = nil
		c.mu.Unlock()
		// As kindkit's writer: a client that takes longer than 10s to
		// accept a batch is cut off.
		if err := c.sock.WriteBatch(c.ws, batch, 10*time.Second); err != nil {
			c.mu.Lock()
			c.closed, c.queue = true, nil
			c.mu.Unlock()
			c.ws.CloseNow()
			return
		}
		if closed {
			return
		}
	}
}

// The canned bytes: what kindkit's demo model (demo.Model) makes of the
// submit that kindload sends, keys in the schema's order as kindkit
// writes them.
const (
	demoSpec   = `{"questions":[{"question":"Which plan are you curious about?","header":"Plan","options":[{"label":"Starter","description":"For one person"},{"label":"Team","description":"Up to 20 seats"},{"label":"Enterprise"}]},{"question":"What should the answer cover?","header":"Topics","options":[{"label":"Pricing"},{"label":"Security"},{"label":"Integrations"}],"multiSelect":true}]}`
	demoArgs   = `{"questions":[{"question":"Which plan are you curious about?","header":"Plan","options":[{"label":"Starter","description":"For one person"},{"label":"Team","description":"Up to 20 seats"},{"label":"Enterprise"}]},{"question":"What should the answer cover?","header":"Topics","options":[{"label":"Pricing"},{"label":"Security"},{"label":"Integrations"}],"multiSelect":true}],"reason":"to tailor the answer to you"}`
	demoValues = `{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"]}]}`
	demoText   = "Thanks — you picked Plan: Team; Topics: Pricing. That is the whole flow: the card parked the turn, your submit was validated, and the turn resumed with the canonical payload."
)

var demoTokens = func() []string {
	var toks []string
	for _, t := range strings.SplitAfter(demoText, " ") {
		toks = append(toks, quote(t))
	}
	return toks
}()

var (
	demoResult = quote(`{"status":"submitted","values":` + demoValues + `}`)
	demoParts  = quote(demoText)
)

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

func newHexID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// frame builds one event: parts are appended as they are, and the
// timestamp and type close it.
func frame(typ string, parts ...string) []byte {
	n := 64
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	b = append(b, `"timestamp":`...)
	b = strconv.AppendInt(b, time.Now().UnixMilli(), 10)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	return append(b, `"}`...)
}

// reqField is `"requestId":"r",`, or nothing when r is empty.
func reqField(r string) string {
	if r == "" {
		return ""
	}
	return `"requestId":` + quote(r) + `,`
}

func createdFrame(r, agentID string) []byte {
	return frame("immediate_response", `{"data":{"agentId":`, quote(agentID),
		`,"agentName":"kindkit","agentParticipantId":"`, newUUID(),
		`","conversationId":"`, newHexID(), `","sessionId":"`, newUUID(),
		`","userParticipantId":"`, newUUID(), `"},"message":"Session created",`, reqField(r), `"status":200,`)
}

func ack202Frame(r string) []byte {
	return frame("immediate_response", `{"data":{},"message":"Processing your request...",`, reqField(r), `"status":202,`)
}

func parkFrame(r, interactionID string) []byte {
	q := quote(r)
	return frame("interaction_required", `{"data":{"data":{"interactionId":"`, interactionID,
		`","kind":"choices","reason":"to tailor the answer to you","spec":`, demoSpec,
		`},"requestId":`, q, `},"requestId":`, q, `,`)
}

func callFrame(r string) []byte {
	q := quote(r)
	return frame("stream_chunk", `{"data":{"node":"request_choices","requestId":`, q,
		`,"state":{"rawResponse":{"toolCall":{"arguments":`, demoArgs,
		`,"name":"request_choices"}}}},"node":"request_choices","requestId":`, q, `,`)
}

func submittedFrame(r, sessionID, interactionID string) []byte {
	return frame("immediate_response", `{"data":{"interactionId":`, quote(interactionID),
		`,"kind":"choices","sessionId":`, quote(sessionID), `,"values":`, demoValues,
		`},"message":"Interaction submitted",`, reqField(r), `"status":200,`)
}

func resultFrame(t string) []byte {
	q := quote(t)
	return frame("stream_chunk", `{"data":{"node":"request_choices","requestId":`, q,
		`,"state":{"rawResponse":{"toolResult":{"isError":false,"name":"request_choices","result":`, demoResult,
		`}}}},"node":"request_choices","requestId":`, q, `,`)
}

func tokenFrame(t, tok string) []byte {
	q := quote(t)
	return frame("stream_token", `{"data":{"requestId":`, q, `,"token":`, tok, `},"requestId":`, q, `,"token":`, tok, `,`)
}

func eventualFrame(t string) []byte {
	q := quote(t)
	return frame("eventual_response", `{"data":{"data":{"messageId":"`, newUUID(),
		`","needsEscalation":false,"response":{"customerHappinessScore":0.5,"needsSatisfactionScore":0.5,"requestSummary":"","resolutionStatus":"in_progress","responseParts":[`, demoParts,
		`],"suggestedNextActions":[]},"usage":{"completionTokens":0,"costUsd":0,"promptTokens":0}},"requestId":`, q,
		`,"status":200},"requestId":`, q, `,"status":200,`)
}

func pongFrame(r string) []byte {
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	return frame("pong", `{"data":{"timestamp":`, ts, `},`, reqField(r))
}

func errorFrame(r, code, msg string) []byte {
	e := `{"code":` + quote(code) + `,"message":` + quote(msg) + `}`
	return frame("error", `{"data":{"error":`, e, `},"error":`, e, `,`, reqField(r))
}
