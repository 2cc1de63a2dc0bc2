package torchzip

import (
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/internal/pickle"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// tensorOpcodes are the opcodes torch.save's pickle (protocol 2) uses for a
// dict of tensors: PROTO, MARK, STOP, None and booleans, the integers,
// unicode strings, the binary memo, tuples, dicts, GLOBAL, BINPERSID and
// REDUCE. Any other is refused.
const tensorOpcodes = "\x80(.N\x88\x89KMJ\x8aX\x8cqrhj)\x85\x86\x87t}sucQR"

// unpickle decodes data.pkl: class references must be ones the reader
// knows, persistent ids name storages of the archive, and the only calls
// are an empty OrderedDict (a tensor's backward hooks) and a tensor's
// rebuild.
func unpickle(data []byte, store *storages) (any, error) {
	return pickle.Decode(data, pickle.Hooks{
		Opcode: func(op byte) error {
			if strings.IndexByte(tensorOpcodes, op) < 0 {
				return fmt.Errorf("opcode not supported in a tensor file")
			}
			return nil
		},
		Global:     knownClass,
		Call:       store.call,
		Persistent: store.load,
	})
}

// knownClass accepts the tensor rebuild function, OrderedDict and torch's
// storage classes.
func knownClass(g *pickle.Global) error {
	_, isStorage := storageClass(g.Name)
	known := (g.Module == "torch._utils" && g.Name == "_rebuild_tensor_v2") ||
		(g.Module == "collections" && g.Name == "OrderedDict") ||
		(g.Module == "torch" && isStorage)
	if !known {
		return fmt.Errorf("class %s is not allowed in a tensor file (want torch._utils._rebuild_tensor_v2, collections.OrderedDict or a torch storage class)", quote.Quote(g.Module+"."+g.Name))
	}
	return nil
}

// call models REDUCE on the known classes: an empty OrderedDict and a
// tensor's rebuild; a storage class is not a callable.
func (s *storages) call(g *pickle.Global, args pickle.Tuple) (any, bool, error) {
	switch g.Name {
	case "OrderedDict":
		if len(args) != 0 {
			return nil, true, fmt.Errorf("OrderedDict with %d arguments, want none", len(args))
		}
		return pickle.NewDict(), true, nil
	case "_rebuild_tensor_v2":
		t, err := s.rebuildTensor(args)
		return t, true, err
	}
	return nil, true, fmt.Errorf("%s is a storage class, not a callable", quote.Quote(g.Module+"."+g.Name))
}

// typeName names a decoded value's type, for messages.
func typeName(v any) string {
	switch v.(type) {
	case *storage:
		return "storage"
	case *Tensor:
		return "tensor"
	}
	return pickle.TypeName(v)
}
