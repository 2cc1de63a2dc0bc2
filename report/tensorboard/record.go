package tensorboard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// castagnoli is CRC-32C's table.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// maskedCRC is TFRecord's masked CRC-32C of b.
func maskedCRC(t *crc32.Table, b []byte) uint32 {
	c := crc32.Checksum(b, t)
	return (c>>15 | c<<17) + 0xa282ead8
}

// appendRecord appends data framed as a TFRecord.
func appendRecord(out []byte, t *crc32.Table, data []byte) []byte {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
	out = append(out, n[:]...)
	out = binary.LittleEndian.AppendUint32(out, maskedCRC(t, n[:]))
	out = append(out, data...)
	return binary.LittleEndian.AppendUint32(out, maskedCRC(t, data))
}

// maxRecord bounds the length a reader accepts for one record.
const maxRecord = 64 << 20

// readRecord reads one record's data from r, checking both CRCs; io.EOF
// at a clean end.
func readRecord(r io.Reader, t *crc32.Table) ([]byte, error) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("a record's header is cut short")
		}
		return nil, err
	}
	if got, want := binary.LittleEndian.Uint32(head[8:]), maskedCRC(t, head[:8]); got != want {
		return nil, fmt.Errorf("length CRC %#x, want %#x", got, want)
	}
	n := binary.LittleEndian.Uint64(head[:8])
	if n > maxRecord {
		return nil, fmt.Errorf("a record of %d bytes, more than %d", n, maxRecord)
	}
	// Read as the bytes arrive: a cut file's length does not allocate.
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)+4); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("a record of %d bytes is cut short: %w", n, err)
	}
	data := buf.Bytes()
	if got, want := binary.LittleEndian.Uint32(data[n:]), maskedCRC(t, data[:n]); got != want {
		return nil, fmt.Errorf("data CRC %#x, want %#x", got, want)
	}
	return data[:n], nil
}
