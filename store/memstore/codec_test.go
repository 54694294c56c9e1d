package memstore

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/kindkit/kindkit/store"
)

// TestCodecKeepsEveryField round-trips a message, a session and a park with
// every field set, found by reflection: a field added to one of them that
// the codec does not keep fails here, not in a conversation's history.
func TestCodecKeepsEveryField(t *testing.T) {
	var m store.Message
	var sess store.Session
	var p store.Park
	n := 0
	for _, v := range []any{&m, &sess, &p} {
		fill(reflect.ValueOf(v).Elem(), &n)
	}
	m.Seq = 0 // a message's place in its conversation's log, not encoded
	if got := readMessage(appendMessage(nil, &m), m.ConversationID); !reflect.DeepEqual(got, &m) {
		t.Errorf("message:\n got %+v\nwant %+v", got, &m)
	}
	if got := readSession(appendSession(nil, &sess)); !reflect.DeepEqual(got, &sess) {
		t.Errorf("session:\n got %+v\nwant %+v", got, &sess)
	}
	enc := appendPark(nil, &p)
	if got, err := readPark(enc); err != nil || !reflect.DeepEqual(got, &p) {
		t.Errorf("park: %v\n got %+v\nwant %+v", err, got, &p)
	}
	// A park's spec and outcome: nil stays nil.
	p.Spec, p.Outcome = nil, nil
	enc = appendPark(nil, &p)
	if got, err := readPark(enc); err != nil || got.Spec != nil || got.Outcome != nil {
		t.Errorf("park without spec and outcome: %v, spec %q, outcome %q", err, got.Spec, got.Outcome)
	}
}

// fill sets every field of v to a value of its own, none zero: n counts
// the values made. JSON fields ([]byte) get a JSON value.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("v" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(`{"n":` + strconv.Itoa(*n) + `}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(*n)*1000, int64(*n)).UTC()))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	default:
		panic("fill: no value for " + v.Type().String())
	}
}
