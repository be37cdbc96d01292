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

// Locate returns the origin of the object at index i of in's list kind
// ("routes", "firewall.chains"), whose own Origin is o: o, or, when o is
// the zero Origin, the path kind[i] in the file Merge took the list from
// as it is (none for an intent that did not come through Merge).
func (in *Intent) Locate(o Origin, kind string, i int) Origin {
	if o != (Origin{}) {
		return o
	}
	return Origin{File: in.file, Path: kind}.index(in.origIndex(kind, i))
}

// FileOf returns the file of an object of in whose Origin is o: what
// Locate's File is, without making the path.
func (in *Intent) FileOf(o Origin) string {
	if o != (Origin{}) {
		return o.File
	}
	return in.file
}
