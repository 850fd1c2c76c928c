package convert

import (
	"fmt"
	"sort"
	"strings"

	"kiln/gguf"
)

// FileType is llama.cpp's llama_ftype: what general.file_type records and
// what llama-quantize takes as its TYPE argument. It names a mix: a default
// tensor type plus per-tensor exceptions (see ChooseTypes).
type FileType uint32

// llama_ftype values (include/llama.h). Gaps are types llama.cpp removed.
const (
	FileTypeF32   FileType = 0  // LLAMA_FTYPE_ALL_F32
	FileTypeF16   FileType = 1  // LLAMA_FTYPE_MOSTLY_F16
	FileTypeQ4_0  FileType = 2  // LLAMA_FTYPE_MOSTLY_Q4_0
	FileTypeQ4_1  FileType = 3  // LLAMA_FTYPE_MOSTLY_Q4_1
	FileTypeQ8_0  FileType = 7  // LLAMA_FTYPE_MOSTLY_Q8_0
	FileTypeQ5_0  FileType = 8  // LLAMA_FTYPE_MOSTLY_Q5_0
	FileTypeQ5_1  FileType = 9  // LLAMA_FTYPE_MOSTLY_Q5_1
	FileTypeQ2_K  FileType = 10 // LLAMA_FTYPE_MOSTLY_Q2_K
	FileTypeQ3_KS FileType = 11 // LLAMA_FTYPE_MOSTLY_Q3_K_S
	FileTypeQ3_KM FileType = 12 // LLAMA_FTYPE_MOSTLY_Q3_K_M
	FileTypeQ3_KL FileType = 13 // LLAMA_FTYPE_MOSTLY_Q3_K_L
	FileTypeQ4_KS FileType = 14 // LLAMA_FTYPE_MOSTLY_Q4_K_S
	FileTypeQ4_KM FileType = 15 // LLAMA_FTYPE_MOSTLY_Q4_K_M
	FileTypeQ5_KS FileType = 16 // LLAMA_FTYPE_MOSTLY_Q5_K_S
	FileTypeQ5_KM FileType = 17 // LLAMA_FTYPE_MOSTLY_Q5_K_M
	FileTypeQ6_K  FileType = 18 // LLAMA_FTYPE_MOSTLY_Q6_K
	FileTypeBF16  FileType = 32 // LLAMA_FTYPE_MOSTLY_BF16
)

type fileTypeInfo struct {
	name string    // llama.cpp's spelling (llama_model_ftype_name without "MOSTLY_")
	base gguf.Type // llama_ftype_get_default_type
}

var fileTypes = map[FileType]fileTypeInfo{
	FileTypeF32:   {"F32", gguf.TypeF32},
	FileTypeF16:   {"F16", gguf.TypeF16},
	FileTypeBF16:  {"BF16", gguf.TypeBF16},
	FileTypeQ4_0:  {"Q4_0", gguf.TypeQ4_0},
	FileTypeQ4_1:  {"Q4_1", gguf.TypeQ4_1},
	FileTypeQ5_0:  {"Q5_0", gguf.TypeQ5_0},
	FileTypeQ5_1:  {"Q5_1", gguf.TypeQ5_1},
	FileTypeQ8_0:  {"Q8_0", gguf.TypeQ8_0},
	FileTypeQ2_K:  {"Q2_K", gguf.TypeQ2_K},
	FileTypeQ3_KS: {"Q3_K_S", gguf.TypeQ3_K},
	FileTypeQ3_KM: {"Q3_K_M", gguf.TypeQ3_K},
	FileTypeQ3_KL: {"Q3_K_L", gguf.TypeQ3_K},
	FileTypeQ4_KS: {"Q4_K_S", gguf.TypeQ4_K},
	FileTypeQ4_KM: {"Q4_K_M", gguf.TypeQ4_K},
	FileTypeQ5_KS: {"Q5_K_S", gguf.TypeQ5_K},
	FileTypeQ5_KM: {"Q5_K_M", gguf.TypeQ5_K},
	FileTypeQ6_K:  {"Q6_K", gguf.TypeQ6_K},
}

// aliases are llama-quantize's shorthands (tools/quantize/quantize.cpp):
// "Q4_K" is Q4_K_M, "Q5_K" is Q5_K_M, "Q3_K" is Q3_K_M.
var aliases = map[string]FileType{
	"Q3_K": FileTypeQ3_KM,
	"Q4_K": FileTypeQ4_KM,
	"Q5_K": FileTypeQ5_KM,
}

// String returns llama.cpp's name ("Q4_K_M"), or "ftype(N)".
func (f FileType) String() string {
	if fi, ok := fileTypes[f]; ok {
		return fi.name
	}
	return fmt.Sprintf("ftype(%d)", uint32(f))
}

// Known reports whether f is a file type this package can write.
func (f FileType) Known() bool { _, ok := fileTypes[f]; return ok }

// Base is the tensor type most tensors of f get (llama_ftype_get_default_type).
func (f FileType) Base() gguf.Type { return fileTypes[f].base }

// ParseFileType maps a llama-quantize type name to its FileType,
// case-insensitively: "Q8_0", "q4_k_m", "F16", and llama-quantize's aliases
// (Q4_K means Q4_K_M, Q5_K means Q5_K_M, Q3_K means Q3_K_M).
func ParseFileType(name string) (FileType, error) {
	up := strings.ToUpper(name)
	if f, ok := aliases[up]; ok {
		return f, nil
	}
	for f, fi := range fileTypes {
		if fi.name == up {
			return f, nil
		}
	}
	return 0, fmt.Errorf("convert: unknown type %q (want one of %s)", name, strings.Join(FileTypeNames(), ", "))
}

// FileTypeNames lists the names ParseFileType accepts, sorted.
func FileTypeNames() []string {
	var names []string
	for _, fi := range fileTypes {
		names = append(names, fi.name)
	}
	for a := range aliases {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}

// PureFileType is the file type recorded for a model whose matrices are
// all of tensor type t (llama-quantize --pure): the file type whose default
// type is t, using llama-quantize's alias for the K types (Q4_K -> Q4_K_M).
func PureFileType(t gguf.Type) (FileType, bool) {
	switch t {
	case gguf.TypeF32:
		return FileTypeF32, true
	case gguf.TypeF16:
		return FileTypeF16, true
	case gguf.TypeBF16:
		return FileTypeBF16, true
	case gguf.TypeQ4_0:
		return FileTypeQ4_0, true
	case gguf.TypeQ4_1:
		return FileTypeQ4_1, true
	case gguf.TypeQ5_0:
		return FileTypeQ5_0, true
	case gguf.TypeQ5_1:
		return FileTypeQ5_1, true
	case gguf.TypeQ8_0:
		return FileTypeQ8_0, true
	case gguf.TypeQ2_K:
		return FileTypeQ2_K, true
	case gguf.TypeQ3_K:
		return FileTypeQ3_KM, true
	case gguf.TypeQ4_K:
		return FileTypeQ4_KM, true
	case gguf.TypeQ5_K:
		return FileTypeQ5_KM, true
	case gguf.TypeQ6_K:
		return FileTypeQ6_K, true
	}
	return 0, false
}

// Scheme says how a writer types its tensors: the file type, and whether
// every quantizable tensor gets the file type's base type (Pure, as
// llama-quantize --pure) instead of the mix rules.
type Scheme struct {
	FileType FileType
	Pure     bool
}

// String is "Q4_K_M" or "Q4_K_M (pure)".
func (s Scheme) String() string {
	if s.Pure {
		return s.FileType.String() + " (pure)"
	}
	return s.FileType.String()
}

// ParseScheme reads a type as `kiln synth --type` takes it: a ggml tensor
// type name ("Q4_K", "F16") means every matrix of that type (pure); any
// other llama-quantize name ("Q4_K_M") means that mix.
func ParseScheme(name string) (Scheme, error) {
	if t, ok := gguf.ParseType(name); ok {
		if f, ok := PureFileType(t); ok {
			return Scheme{FileType: f, Pure: true}, nil
		}
		return Scheme{}, fmt.Errorf("convert: cannot write tensors of type %s (want one of %s)", t, strings.Join(FileTypeNames(), ", "))
	}
	f, err := ParseFileType(name)
	if err != nil {
		return Scheme{}, err
	}
	return Scheme{FileType: f}, nil
}
