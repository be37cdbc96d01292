package intent

import "strconv"

// Origin says where an object was defined: a file and the object's JSON
// path in that file. Merge sets it on every object it keeps, so that errors
// found later in the merged intent (and status reports) can name the file
// the operator wrote. The zero Origin means "this intent, at the object's
// own position".
type Origin struct {
	File string // "" when the intent did not come through Merge
	Path string // "interfaces[2]", `sysctls["net.ipv4.ip_forward"]`, ...
}

// String returns "interfaces[2] in a.json", or just the path without a file.
func (o Origin) String() string {
	if o.File == "" {
		return o.Path
	}
	return o.Path + " in " + o.File
}

// field returns the origin of the member name of o.
func (o Origin) field(name string) Origin {
	if o.Path == "" {
		return Origin{File: o.File, Path: name}
	}
	return Origin{File: o.File, Path: o.Path + "." + name}
}

// index returns the origin of element i of o.
func (o Origin) index(i int) Origin {
	var buf [64]byte
	b := append(append(buf[:0], o.Path...), '[')
	b = append(strconv.AppendInt(b, int64(i), 10), ']')
	return Origin{File: o.File, Path: string(b)}
}

// key returns the origin of the map entry k of o.
func (o Origin) key(k string) Origin {
	return Origin{File: o.File, Path: o.Path + "[" + strconv.Quote(k) + "]"}
}

// locate returns o, or the path kind[i] when o is the zero Origin.
func locate(o Origin, kind string, i int) Origin {
	if o != (Origin{}) {
		return o
	}
	return Origin{Path: kind}.index(i)
}
