package pbbp2

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The bytes protobuf writes for a ping (SeqID 1, LogID 0, service 7, method 0, type=ping).
var pingBytes = []byte{0x08, 0x01, 0x10, 0x00, 0x18, 0x07, 0x20, 0x00,
	0x2a, 0x0c, 0x0a, 0x04, 't', 'y', 'p', 'e', 0x12, 0x04, 'p', 'i', 'n', 'g'}

func TestFrameMatchesProtobufBytes(t *testing.T) {
	f := &Frame{SeqID: 1, Service: 7, Method: MethodControl, Headers: []Header{{HeaderType, TypePing}}}
	require.Equal(t, pingBytes, f.Marshal())
	back, err := Unmarshal(pingBytes)
	require.NoError(t, err)
	require.Equal(t, f, back)
}

func TestFrameRoundTrip(t *testing.T) {
	f := &Frame{SeqID: 1<<40 + 7, LogID: 123, Service: 9, Method: MethodData,
		Headers:         []Header{{HeaderType, TypeEvent}, {HeaderMessageID, "m1"}, {HeaderSum, "2"}, {HeaderSeq, "1"}},
		PayloadEncoding: "json", PayloadType: "x", Payload: []byte(`{"x":"你好"}`), LogIDNew: "log-1"}
	back, err := Unmarshal(f.Marshal())
	require.NoError(t, err)
	require.Equal(t, f, back)
	require.Equal(t, "m1", back.Header(HeaderMessageID))
	back.SetHeader(HeaderBizRT, "3")
	back.SetHeader(HeaderSum, "1")
	require.Equal(t, "3", back.Header(HeaderBizRT))
	require.Equal(t, "1", back.Header(HeaderSum))
}

func TestFrameRefusesWhatIsNotAFrame(t *testing.T) {
	for name, b := range map[string][]byte{
		"text":      []byte("hello, not protobuf"),
		"truncated": pingBytes[:len(pingBytes)-3],
		"no method": {0x08, 0x01, 0x10, 0x00, 0x18, 0x07},
	} {
		_, err := Unmarshal(b)
		require.Error(t, err, name)
	}
}
