package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ValueType is the type tag of a metadata value (enum gguf_type).
type ValueType uint32

// gguf_type values, as stored in the file.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	TypeUint8: "uint8", TypeInt8: "int8", TypeUint16: "uint16", TypeInt16: "int16",
	TypeUint32: "uint32", TypeInt32: "int32", TypeFloat32: "float32", TypeBool: "bool",
	TypeString: "string", TypeArray: "array", TypeUint64: "uint64", TypeInt64: "int64",
	TypeFloat64: "float64",
}

// Valid reports whether t is one of the 13 GGUF value types.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// String returns the type's name ("uint32"), or "valuetype(N)" when invalid.
func (t ValueType) String() string {
	if t.Valid() {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// size is the encoded size in bytes of a fixed-size type; 0 for string,
// array and invalid types.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes one encoded value of t can occupy: the bound
// used to reject element counts a file cannot possibly hold.
func (t ValueType) minSize() int {
	switch t {
	case TypeString:
		return 8 // uint64 length, empty string
	case TypeArray:
		return 12 // uint32 element type + uint64 count, empty array
	}
	return t.size()
}

func (t ValueType) isInt() bool {
	switch t {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
		return true
	}
	return false
}

func (t ValueType) isSigned() bool {
	return t == TypeInt8 || t == TypeInt16 || t == TypeInt32 || t == TypeInt64
}

// Value is one typed metadata value. Scalars hold their payload inline;
// arrays hold a homogeneous list of elements of ElemType, which may itself be
// TypeArray (arrays of arrays, each inner array with its own element type).
// A Value owns its memory: it stays valid after the File it came from is
// closed. The zero Value is a uint8 0.
type Value struct {
	typ ValueType
	num uint64 // scalar payload: integers as their two's-complement bits widened to 64, floats as IEEE bits, bool 0/1
	str string // TypeString payload
	arr *array // TypeArray payload
}

// array is the payload of an array Value, stored in exactly one of three
// forms by element type.
type array struct {
	elem ValueType
	n    int
	raw  []byte   // fixed-size elements: n*elem.size() bytes, little-endian, as in the file
	strs []string // TypeString elements
	vals []Value  // TypeArray elements (each of Type() TypeArray)
	err  error    // set by ArrayValue when an element does not match elem
}

// Type is the value's type tag.
func (v Value) Type() ValueType { return v.typ }

// ElemType is the element type of an array (0 for a non-array).
func (v Value) ElemType() ValueType {
	if v.arr == nil {
		return 0
	}
	return v.arr.elem
}

// Len is the number of elements of an array (0 for a non-array).
func (v Value) Len() int {
	if v.arr == nil {
		return 0
	}
	return v.arr.n
}

// Uint returns any integer value that is not negative.
func (v Value) Uint() (uint64, bool) {
	if !v.typ.isInt() || (v.typ.isSigned() && int64(v.num) < 0) {
		return 0, false
	}
	return v.num, true
}

// Int returns any integer value that fits in an int64.
func (v Value) Int() (int64, bool) {
	if !v.typ.isInt() || (v.typ == TypeUint64 && v.num > math.MaxInt64) {
		return 0, false
	}
	return int64(v.num), true
}

// Float returns a float32 or float64 value, or an integer converted to
// float64 (rounded to nearest when its magnitude exceeds 2^53).
func (v Value) Float() (float64, bool) {
	switch {
	case v.typ == TypeFloat32:
		return float64(math.Float32frombits(uint32(v.num))), true
	case v.typ == TypeFloat64:
		return math.Float64frombits(v.num), true
	case v.typ.isSigned():
		return float64(int64(v.num)), true
	case v.typ.isInt():
		return float64(v.num), true
	}
	return 0, false
}

// Bool returns a bool value.
func (v Value) Bool() (bool, bool) {
	if v.typ != TypeBool {
		return false, false
	}
	return v.num != 0, true
}

// String returns a string value. (For a printable form of any Value, format
// it with fmt: Value implements fmt.Formatter.)
func (v Value) String() (string, bool) {
	if v.typ != TypeString {
		return "", false
	}
	return v.str, true
}

// Strings returns a copy of an array of strings.
func (v Value) Strings() ([]string, bool) {
	if v.arr == nil || v.arr.elem != TypeString || v.arr.err != nil {
		return nil, false
	}
	return append([]string(nil), v.arr.strs...), true
}

// Float32s returns an array of float32, or of float64 converted to float32.
func (v Value) Float32s() ([]float32, bool) {
	if v.arr == nil || v.arr.err != nil {
		return nil, false
	}
	raw := v.arr.raw
	switch v.arr.elem {
	case TypeFloat32:
		out := make([]float32, v.arr.n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, true
	case TypeFloat64:
		out := make([]float32, v.arr.n)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
		return out, true
	}
	return nil, false
}

// Int32s returns an array of any integer type whose every element fits in
// an int32 (token types are int32 in llama.cpp files, but other writers use
// other widths).
func (v Value) Int32s() ([]int32, bool) {
	if v.arr == nil || v.arr.err != nil || !v.arr.elem.isInt() {
		return nil, false
	}
	out := make([]int32, v.arr.n)
	for i := range out {
		x := v.arr.rawElem(i)
		if v.arr.elem.isSigned() {
			if s := int64(x); s < math.MinInt32 || s > math.MaxInt32 {
				return nil, false
			}
		} else if x > math.MaxInt32 {
			return nil, false
		}
		out[i] = int32(x)
	}
	return out, true
}

// Array returns the elements of any array as Values.
func (v Value) Array() ([]Value, bool) {
	if v.arr == nil || v.arr.err != nil {
		return nil, false
	}
	out := make([]Value, v.arr.n)
	for i := range out {
		out[i] = v.arr.elemValue(i)
	}
	return out, true
}

// elemValue is element i (0 <= i < n) of a valid array.
func (a *array) elemValue(i int) Value {
	switch a.elem {
	case TypeArray:
		return a.vals[i]
	case TypeString:
		return Value{typ: TypeString, str: a.strs[i]}
	}
	return Value{typ: a.elem, num: a.rawElem(i)}
}

// rawElem decodes fixed-size element i into Value.num form (signed integers
// sign-extended).
func (a *array) rawElem(i int) uint64 {
	return decodeScalar(a.elem, a.raw[i*a.elem.size():])
}

// decodeScalar reads one fixed-size value of type t from the front of b
// (len(b) >= t.size()) into Value.num form.
func decodeScalar(t ValueType, b []byte) uint64 {
	switch t {
	case TypeUint8, TypeBool:
		return uint64(b[0])
	case TypeInt8:
		return uint64(int64(int8(b[0])))
	case TypeUint16:
		return uint64(binary.LittleEndian.Uint16(b))
	case TypeInt16:
		return uint64(int64(int16(binary.LittleEndian.Uint16(b))))
	case TypeUint32, TypeFloat32:
		return uint64(binary.LittleEndian.Uint32(b))
	case TypeInt32:
		return uint64(int64(int32(binary.LittleEndian.Uint32(b))))
	default: // TypeUint64, TypeInt64, TypeFloat64
		return binary.LittleEndian.Uint64(b)
	}
}

// encodeScalar appends num (Value.num form) as a t.size()-byte little-endian value.
func encodeScalar(dst []byte, t ValueType, num uint64) []byte {
	switch t.size() {
	case 1:
		return append(dst, byte(num))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(num))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(num))
	default:
		return binary.LittleEndian.AppendUint64(dst, num)
	}
}

// Equal reports whether v and w have the same type and contents; floats are
// compared by their bits (so NaN equals the same NaN).
func (v Value) Equal(w Value) bool {
	if v.typ != w.typ || v.num != w.num || v.str != w.str {
		return false
	}
	if v.typ != TypeArray {
		return true
	}
	a, b := v.arr, w.arr
	if a == nil || b == nil {
		return a == b
	}
	if a.elem != b.elem || a.n != b.n || string(a.raw) != string(b.raw) || (a.err == nil) != (b.err == nil) {
		return false
	}
	for i := range a.strs {
		if a.strs[i] != b.strs[i] {
			return false
		}
	}
	for i := range a.vals {
		if !a.vals[i].Equal(b.vals[i]) {
			return false
		}
	}
	return true
}

// Scalar constructors, one per value type.

// Uint8Value is a uint8 value.
func Uint8Value(x uint8) Value { return Value{typ: TypeUint8, num: uint64(x)} }

// Int8Value is a int8 value.
func Int8Value(x int8) Value { return Value{typ: TypeInt8, num: uint64(int64(x))} }

// Uint16Value is a uint16 value.
func Uint16Value(x uint16) Value { return Value{typ: TypeUint16, num: uint64(x)} }

// Int16Value is a int16 value.
func Int16Value(x int16) Value { return Value{typ: TypeInt16, num: uint64(int64(x))} }

// Uint32Value is a uint32 value.
func Uint32Value(x uint32) Value { return Value{typ: TypeUint32, num: uint64(x)} }

// Int32Value is a int32 value.
func Int32Value(x int32) Value { return Value{typ: TypeInt32, num: uint64(int64(x))} }

// Uint64Value is a uint64 value.
func Uint64Value(x uint64) Value { return Value{typ: TypeUint64, num: x} }

// Int64Value is a int64 value.
func Int64Value(x int64) Value { return Value{typ: TypeInt64, num: uint64(x)} }

// Float32Value is a float32 value.
func Float32Value(x float32) Value { return Value{typ: TypeFloat32, num: uint64(math.Float32bits(x))} }

// Float64Value is a float64 value.
func Float64Value(x float64) Value { return Value{typ: TypeFloat64, num: math.Float64bits(x)} }

// StringValue is a string value.
func StringValue(s string) Value { return Value{typ: TypeString, str: s} }

// BoolValue is a bool value.
func BoolValue(b bool) Value {
	if b {
		return Value{typ: TypeBool, num: 1}
	}
	return Value{typ: TypeBool}
}

// StringsValue is an array of strings (the slice is copied).
func StringsValue(s []string) Value {
	return Value{typ: TypeArray, arr: &array{elem: TypeString, n: len(s), strs: append([]string{}, s...)}}
}

// Float32sValue is an array of float32.
func Float32sValue(x []float32) Value {
	raw := make([]byte, 0, 4*len(x))
	for _, f := range x {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
	}
	return Value{typ: TypeArray, arr: &array{elem: TypeFloat32, n: len(x), raw: raw}}
}

// Int32sValue is an array of int32.
func Int32sValue(x []int32) Value {
	raw := make([]byte, 0, 4*len(x))
	for _, i := range x {
		raw = binary.LittleEndian.AppendUint32(raw, uint32(i))
	}
	return Value{typ: TypeArray, arr: &array{elem: TypeInt32, n: len(x), raw: raw}}
}

// Uint32sValue is an array of uint32.
func Uint32sValue(x []uint32) Value {
	raw := make([]byte, 0, 4*len(x))
	for _, i := range x {
		raw = binary.LittleEndian.AppendUint32(raw, i)
	}
	return Value{typ: TypeArray, arr: &array{elem: TypeUint32, n: len(x), raw: raw}}
}

// ArrayValue is an array of elements of type elem, each of which must have
// Type() == elem; for elem == TypeArray the elements are arrays, each with
// its own element type. A mismatched element or an invalid elem does not
// panic: the Value's accessors report !ok and Writer.Add reports the error.
func ArrayValue(elem ValueType, elems []Value) Value {
	a := &array{elem: elem, n: len(elems)}
	switch {
	case !elem.Valid():
		a.err = fmt.Errorf("gguf: array element type %d is not a GGUF value type (0..12)", uint32(elem))
	case elem == TypeArray:
		a.vals = append([]Value{}, elems...)
	case elem == TypeString:
		a.strs = make([]string, len(elems))
	default:
		a.raw = make([]byte, 0, elem.size()*len(elems))
	}
	if a.err == nil {
		for i, e := range elems {
			if e.typ != elem {
				a.err = fmt.Errorf("gguf: array of %s has element %d of type %s", elem, i, e.typ)
				break
			}
			switch {
			case elem == TypeString:
				a.strs[i] = e.str
			case elem != TypeArray:
				a.raw = encodeScalar(a.raw, elem, e.num)
			}
		}
	}
	if a.err != nil {
		a.raw, a.strs, a.vals = nil, nil, nil
	}
	return Value{typ: TypeArray, arr: a}
}

// maxDepth bounds array nesting: an array of arrays is depth 2. Real files
// use depth 1; the bound keeps hostile input from recursing without limit.
const maxDepth = 8

// check reports why v cannot be written: a mismatched array element, an
// invalid type, or nesting deeper than maxDepth.
func (v Value) check(depth int) error {
	if !v.typ.Valid() {
		return fmt.Errorf("gguf: value type %d is not a GGUF value type (0..12)", uint32(v.typ))
	}
	if v.typ != TypeArray {
		return nil
	}
	if depth >= maxDepth {
		return fmt.Errorf("gguf: arrays nested more than %d deep", maxDepth)
	}
	if v.arr == nil {
		return fmt.Errorf("gguf: array value has no elements record (build arrays with ArrayValue)")
	}
	if v.arr.err != nil {
		return v.arr.err
	}
	for _, e := range v.arr.vals {
		if err := e.check(depth + 1); err != nil {
			return err
		}
	}
	return nil
}
