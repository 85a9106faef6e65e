// Package pbbp2 is the frame of Feishu's long connection, encoded by hand: the
// bot and the fake platform (feishupeer) both speak it.
package pbbp2

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The long connection's frames are protobuf messages (pbbp2.proto in
// Feishu's SDKs), one per binary WebSocket message:
//
//	message Header { required string key = 1; required string value = 2; }
//	message Frame {
//	  required uint64 SeqID = 1;  required uint64 LogID = 2;
//	  required int32 service = 3; required int32 method = 4;
//	  repeated Header headers = 5;
//	  optional string payload_encoding = 6; optional string payload_type = 7;
//	  optional bytes payload = 8; optional string LogIDNew = 9;
//	}

// Frame methods.
const (
	MethodControl = 0 // ping, pong
	MethodData    = 1 // event, card
)

// Header keys and the values of "type".
const (
	HeaderType      = "type"
	HeaderMessageID = "message_id"
	HeaderSum       = "sum"
	HeaderSeq       = "seq"
	HeaderTraceID   = "trace_id"
	HeaderBizRT     = "biz_rt"

	TypePing  = "ping"
	TypePong  = "pong"
	TypeEvent = "event"
	TypeCard  = "card"
)

// Header is one key/value of a frame.
type Header struct{ Key, Value string }

// Frame is one pbbp2 frame.
type Frame struct {
	SeqID           uint64
	LogID           uint64
	Service         int32
	Method          int32
	Headers         []Header
	PayloadEncoding string
	PayloadType     string
	Payload         []byte
	LogIDNew        string
}

// Header is the value of the frame's header key ("" if absent).
func (f *Frame) Header(key string) string {
	for _, h := range f.Headers {
		if h.Key == key {
			return h.Value
		}
	}
	return ""
}

// SetHeader replaces (or adds) a header.
func (f *Frame) SetHeader(key, value string) {
	for i := range f.Headers {
		if f.Headers[i].Key == key {
			f.Headers[i].Value = value
			return
		}
	}
	f.Headers = append(f.Headers, Header{key, value})
}

// Marshal encodes the frame as protobuf, fields in number order as the SDKs write them.
func (f *Frame) Marshal() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, f.SeqID)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, f.LogID)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int64(f.Service))) // int32 is sign-extended on the wire
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int64(f.Method)))
	for _, h := range f.Headers {
		var hb []byte
		hb = protowire.AppendTag(hb, 1, protowire.BytesType)
		hb = protowire.AppendString(hb, h.Key)
		hb = protowire.AppendTag(hb, 2, protowire.BytesType)
		hb = protowire.AppendString(hb, h.Value)
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, hb)
	}
	for _, s := range []struct {
		num protowire.Number
		v   string
	}{{6, f.PayloadEncoding}, {7, f.PayloadType}} {
		if s.v != "" {
			b = protowire.AppendTag(b, s.num, protowire.BytesType)
			b = protowire.AppendString(b, s.v)
		}
	}
	if f.Payload != nil {
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, f.Payload)
	}
	if f.LogIDNew != "" {
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendString(b, f.LogIDNew)
	}
	return b
}

var errBadFrame = errors.New("not a pbbp2 frame")

// Unmarshal decodes one frame; unknown fields are skipped, as protobuf does.
func Unmarshal(b []byte) (*Frame, error) {
	f := &Frame{}
	seen := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: tag: %v", errBadFrame, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num >= 1 && num <= 4 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return nil, fmt.Errorf("%w: field %d: %v", errBadFrame, num, protowire.ParseError(m))
			}
			b = b[m:]
			seen |= 1 << num
			switch num {
			case 1:
				f.SeqID = v
			case 2:
				f.LogID = v
			case 3:
				f.Service = int32(v)
			case 4:
				f.Method = int32(v)
			}
		case num >= 5 && num <= 9 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, fmt.Errorf("%w: field %d: %v", errBadFrame, num, protowire.ParseError(m))
			}
			b = b[m:]
			switch num {
			case 5:
				h, err := unmarshalHeader(v)
				if err != nil {
					return nil, err
				}
				f.Headers = append(f.Headers, h)
			case 6:
				f.PayloadEncoding = string(v)
			case 7:
				f.PayloadType = string(v)
			case 8:
				f.Payload = append([]byte{}, v...)
			case 9:
				f.LogIDNew = string(v)
			}
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return nil, fmt.Errorf("%w: field %d: %v", errBadFrame, num, protowire.ParseError(m))
			}
			b = b[m:]
		}
	}
	// SeqID, LogID, service and method are required (proto2).
	if want := 1<<1 | 1<<2 | 1<<3 | 1<<4; seen&want != want {
		return nil, fmt.Errorf("%w: required fields missing", errBadFrame)
	}
	return f, nil
}

func unmarshalHeader(b []byte) (Header, error) {
	var h Header
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return h, fmt.Errorf("%w: header tag", errBadFrame)
		}
		b = b[n:]
		if typ != protowire.BytesType || (num != 1 && num != 2) {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return h, fmt.Errorf("%w: header field %d", errBadFrame, num)
			}
			b = b[m:]
			continue
		}
		v, m := protowire.ConsumeString(b)
		if m < 0 {
			return h, fmt.Errorf("%w: header field %d", errBadFrame, num)
		}
		b = b[m:]
		if num == 1 {
			h.Key = v
		} else {
			h.Value = v
		}
	}
	return h, nil
}
