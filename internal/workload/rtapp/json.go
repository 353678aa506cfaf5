package rtapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// value is a JSON value that keeps the order of object keys: rt-app runs a
// task's events in the order they are written.
type value struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	obj  []member
	arr  []value
	str  string
	num  json.Number
	b    bool
	// off is the byte offset where the value starts, for messages.
	off int64
}

type member struct {
	key string
	val value
	off int64
}

// parseJSON parses strict JSON (rt-app reads it with json-c; workgen's
// comment and duplicate-key extensions are not accepted).
func parseJSON(data []byte) (value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := parseValue(d, 0)
	if err != nil {
		return v, err
	}
	if _, err := d.Token(); err != io.EOF {
		return v, fmt.Errorf("offset %d: data after the top-level object", d.InputOffset())
	}
	return v, nil
}

func parseValue(d *json.Decoder, depth int) (value, error) {
	if depth > 64 {
		return value{}, fmt.Errorf("offset %d: nested too deeply", d.InputOffset())
	}
	off := d.InputOffset()
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			return value{}, fmt.Errorf("unexpected end of JSON")
		}
		return value{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := value{kind: 'o', off: off}
			seen := map[string]bool{}
			for d.More() {
				koff := d.InputOffset()
				kt, err := d.Token()
				if err != nil {
					return v, err
				}
				key, ok := kt.(string)
				if !ok {
					return v, fmt.Errorf("offset %d: object key is not a string", koff)
				}
				if seen[key] {
					return v, fmt.Errorf("duplicate key %q (give repeated events distinct names: run1, run2)", key)
				}
				seen[key] = true
				val, err := parseValue(d, depth+1)
				if err != nil {
					return v, err
				}
				v.obj = append(v.obj, member{key, val, koff})
			}
			if _, err := d.Token(); err != nil {
				return v, err
			}
			return v, nil
		case '[':
			v := value{kind: 'a', off: off}
			for d.More() {
				val, err := parseValue(d, depth+1)
				if err != nil {
					return v, err
				}
				v.arr = append(v.arr, val)
			}
			if _, err := d.Token(); err != nil {
				return v, err
			}
			return v, nil
		}
		return value{}, fmt.Errorf("offset %d: unexpected %v", off, t)
	case string:
		return value{kind: 's', str: t, off: off}, nil
	case json.Number:
		return value{kind: 'n', num: t, off: off}, nil
	case bool:
		return value{kind: 'b', b: t, off: off}, nil
	case nil:
		return value{kind: 'z', off: off}, nil
	}
	return value{}, fmt.Errorf("offset %d: unexpected token", off)
}

func (v value) kindName() string {
	switch v.kind {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// int reads an integer (rt-app reads integers with json_object_get_int).
func (v value) int(what string) (int64, error) {
	if v.kind != 'n' {
		return 0, fmt.Errorf("%s must be an integer, not %s", what, v.kindName())
	}
	n, err := strconv.ParseInt(string(v.num), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v.num), 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("%s must be an integer, not %s", what, v.num)
		}
		n = int64(f)
	}
	return n, nil
}

func (v value) string(what string) (string, error) {
	if v.kind != 's' {
		return "", fmt.Errorf("%s must be a string, not %s", what, v.kindName())
	}
	return v.str, nil
}
