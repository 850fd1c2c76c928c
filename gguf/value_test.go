package gguf

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestScalarAccessors(t *testing.T) {
	type want struct {
		u     uint64
		uok   bool
		i     int64
		iok   bool
		f     float64
		fok   bool
		b     bool
		bok   bool
		s     string
		sok   bool
		vtype ValueType
	}
	for _, tc := range []struct {
		name string
		v    Value
		want want
	}{
		{"uint8", Uint8Value(200), want{u: 200, uok: true, i: 200, iok: true, f: 200, fok: true, vtype: TypeUint8}},
		{"int8 negative", Int8Value(-5), want{i: -5, iok: true, f: -5, fok: true, vtype: TypeInt8}},
		{"int8 positive", Int8Value(7), want{u: 7, uok: true, i: 7, iok: true, f: 7, fok: true, vtype: TypeInt8}},
		{"uint16", Uint16Value(65535), want{u: 65535, uok: true, i: 65535, iok: true, f: 65535, fok: true, vtype: TypeUint16}},
		{"int16", Int16Value(-32768), want{i: -32768, iok: true, f: -32768, fok: true, vtype: TypeInt16}},
		{"uint32 max", Uint32Value(math.MaxUint32), want{u: math.MaxUint32, uok: true, i: math.MaxUint32, iok: true, f: math.MaxUint32, fok: true, vtype: TypeUint32}},
		{"int32", Int32Value(-1), want{i: -1, iok: true, f: -1, fok: true, vtype: TypeInt32}},
		{"uint64 max", Uint64Value(math.MaxUint64), want{u: math.MaxUint64, uok: true, f: math.MaxUint64, fok: true, vtype: TypeUint64}},
		{"int64 min", Int64Value(math.MinInt64), want{i: math.MinInt64, iok: true, f: math.MinInt64, fok: true, vtype: TypeInt64}},
		{"float32", Float32Value(1e-5), want{f: float64(float32(1e-5)), fok: true, vtype: TypeFloat32}},
		{"float64", Float64Value(-2.5), want{f: -2.5, fok: true, vtype: TypeFloat64}},
		{"bool true", BoolValue(true), want{b: true, bok: true, vtype: TypeBool}},
		{"bool false", BoolValue(false), want{bok: true, vtype: TypeBool}},
		{"string", StringValue("llama"), want{s: "llama", sok: true, vtype: TypeString}},
		{"array", Int32sValue([]int32{1}), want{vtype: TypeArray}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, w := tc.v, tc.want
			if v.Type() != w.vtype {
				t.Errorf("Type() = %v, want %v", v.Type(), w.vtype)
			}
			if u, ok := v.Uint(); u != w.u || ok != w.uok {
				t.Errorf("Uint() = %d, %v; want %d, %v", u, ok, w.u, w.uok)
			}
			if i, ok := v.Int(); i != w.i || ok != w.iok {
				t.Errorf("Int() = %d, %v; want %d, %v", i, ok, w.i, w.iok)
			}
			if f, ok := v.Float(); f != w.f || ok != w.fok {
				t.Errorf("Float() = %g, %v; want %g, %v", f, ok, w.f, w.fok)
			}
			if b, ok := v.Bool(); b != w.b || ok != w.bok {
				t.Errorf("Bool() = %v, %v; want %v, %v", b, ok, w.b, w.bok)
			}
			if s, ok := v.String(); s != w.s || ok != w.sok {
				t.Errorf("String() = %q, %v; want %q, %v", s, ok, w.s, w.sok)
			}
			if v.Type() != TypeArray {
				if _, ok := v.Array(); ok {
					t.Error("Array() ok on a scalar")
				}
				if v.Len() != 0 {
					t.Errorf("Len() = %d on a scalar", v.Len())
				}
			}
		})
	}
}

func TestArrayAccessors(t *testing.T) {
	i32 := func(v Value) ([]int32, bool) { return v.Int32s() }
	for _, tc := range []struct {
		name string
		v    Value
		elem ValueType
		n    int
		i32  []int32 // nil: Int32s must fail
		f32  []float32
		strs []string
	}{
		{"int32", Int32sValue([]int32{-1, 2, math.MaxInt32}), TypeInt32, 3, []int32{-1, 2, math.MaxInt32}, nil, nil},
		{"uint32 small", Uint32sValue([]uint32{0, 7}), TypeUint32, 2, []int32{0, 7}, nil, nil},
		{"uint32 too big for int32", Uint32sValue([]uint32{0, math.MaxUint32}), TypeUint32, 2, nil, nil, nil},
		{"int8", ArrayValue(TypeInt8, []Value{Int8Value(-3), Int8Value(4)}), TypeInt8, 2, []int32{-3, 4}, nil, nil},
		{"int64 out of range", ArrayValue(TypeInt64, []Value{Int64Value(math.MinInt32 - 1)}), TypeInt64, 1, nil, nil, nil},
		{"float32", Float32sValue([]float32{0.5, -1}), TypeFloat32, 2, nil, []float32{0.5, -1}, nil},
		{"float64", ArrayValue(TypeFloat64, []Value{Float64Value(0.25)}), TypeFloat64, 1, nil, []float32{0.25}, nil},
		{"strings", StringsValue([]string{"a", "", "ß"}), TypeString, 3, nil, nil, []string{"a", "", "ß"}},
		{"empty int32", Int32sValue(nil), TypeInt32, 0, []int32{}, nil, nil},
		{"bool", ArrayValue(TypeBool, []Value{BoolValue(true)}), TypeBool, 1, nil, nil, nil},
		{"mismatched element", ArrayValue(TypeInt32, []Value{Int32Value(1), Uint32Value(2)}), TypeInt32, 2, nil, nil, nil},
		{"invalid element type", ArrayValue(ValueType(13), nil), ValueType(13), 0, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.v
			if v.Type() != TypeArray || v.ElemType() != tc.elem || v.Len() != tc.n {
				t.Fatalf("Type %v ElemType %v Len %d; want array %v %d", v.Type(), v.ElemType(), v.Len(), tc.elem, tc.n)
			}
			if got, ok := i32(v); ok != (tc.i32 != nil) || !slices.Equal(got, tc.i32) {
				t.Errorf("Int32s() = %v, %v; want %v", got, ok, tc.i32)
			}
			if got, ok := v.Float32s(); ok != (tc.f32 != nil) || !slices.Equal(got, tc.f32) {
				t.Errorf("Float32s() = %v, %v; want %v", got, ok, tc.f32)
			}
			if got, ok := v.Strings(); ok != (tc.strs != nil) || !slices.Equal(got, tc.strs) {
				t.Errorf("Strings() = %q, %v; want %q", got, ok, tc.strs)
			}
			elems, ok := v.Array()
			bad := strings.HasPrefix(tc.name, "mismatched") || strings.HasPrefix(tc.name, "invalid")
			if ok == bad || (!bad && len(elems) != tc.n) {
				t.Errorf("Array() = %d elems, %v", len(elems), ok)
			}
			for i, e := range elems {
				if e.Type() != tc.elem {
					t.Errorf("element %d has type %v", i, e.Type())
				}
			}
			if err := v.check(0); (err != nil) != bad {
				t.Errorf("check() = %v", err)
			}
			if _, ok := v.Uint(); ok {
				t.Error("Uint() ok on an array")
			}
		})
	}
}

func TestAccessorsReturnCopies(t *testing.T) {
	v := StringsValue([]string{"a", "b"})
	s, _ := v.Strings()
	s[0] = "changed"
	if again, _ := v.Strings(); again[0] != "a" {
		t.Errorf("Strings() shares its backing array: %q", again)
	}
	in := []string{"x"}
	v = StringsValue(in)
	in[0] = "y"
	if got, _ := v.Strings(); got[0] != "x" {
		t.Errorf("StringsValue keeps the caller's slice: %q", got)
	}
}

func TestNestedArray(t *testing.T) {
	inner1 := Int32sValue([]int32{1, 2})
	inner2 := StringsValue([]string{"x"})
	v := ArrayValue(TypeArray, []Value{inner1, inner2, ArrayValue(TypeArray, []Value{Float32sValue([]float32{3})})})
	if v.ElemType() != TypeArray || v.Len() != 3 {
		t.Fatalf("ElemType %v Len %d", v.ElemType(), v.Len())
	}
	elems, ok := v.Array()
	if !ok || !elems[0].Equal(inner1) || !elems[1].Equal(inner2) || elems[2].Len() != 1 {
		t.Fatalf("Array() = %v, %v", elems, ok)
	}
	if err := v.check(0); err != nil {
		t.Fatal(err)
	}
	deep := Int32sValue(nil)
	for range maxDepth {
		deep = ArrayValue(TypeArray, []Value{deep})
	}
	if err := deep.check(0); err == nil {
		t.Errorf("check() accepted %d levels of nesting", maxDepth+1)
	}
}

func TestEqual(t *testing.T) {
	nan := Float32Value(float32(math.NaN()))
	for _, tc := range []struct {
		a, b Value
		want bool
	}{
		{Uint32Value(1), Uint32Value(1), true},
		{Uint32Value(1), Int32Value(1), false},
		{nan, nan, true},
		{StringValue("a"), StringValue("b"), false},
		{StringsValue([]string{"a"}), StringsValue([]string{"a"}), true},
		{StringsValue([]string{"a"}), StringsValue([]string{"a", "b"}), false},
		{Int32sValue([]int32{1}), Uint32sValue([]uint32{1}), false},
		{ArrayValue(TypeArray, []Value{Int32sValue([]int32{1})}), ArrayValue(TypeArray, []Value{Int32sValue([]int32{2})}), false},
		{ArrayValue(TypeInt32, []Value{Int32Value(5)}), Int32sValue([]int32{5}), true},
	} {
		if got := tc.a.Equal(tc.b); got != tc.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	many := make([]int32, 20)
	for i := range many {
		many[i] = int32(i)
	}
	for _, tc := range []struct {
		v      Value
		format string
		want   string
	}{
		{StringValue("a\"b"), "%v", `"a\"b"`},
		{Uint32Value(7), "%v", "7"},
		{Int8Value(-7), "%v", "-7"},
		{Float32Value(1e-5), "%v", "1e-05"},
		{Float64Value(0.1), "%v", "0.1"},
		{BoolValue(true), "%s", "true"},
		{StringsValue([]string{"a", "b"}), "%v", `[]string(2)["a" "b"]`},
		{Int32sValue(many), "%v", "[]int32(20)[0 1 2 3 4 5 6 7 … +12 more]"},
		{Int32sValue(many[:3]), "%+v", "[]int32(3)[0 1 2]"},
		{ArrayValue(TypeArray, []Value{Int32sValue([]int32{1})}), "%v", "[]array(1)[[]int32(1)[1]]"},
	} {
		if got := fmt.Sprintf(tc.format, tc.v); got != tc.want {
			t.Errorf("Sprintf(%q) = %s, want %s", tc.format, got, tc.want)
		}
	}
	if got := Int32sValue(many).Text(); !strings.HasSuffix(got, "+12 more]") {
		t.Errorf("Text() = %s", got)
	}
}
