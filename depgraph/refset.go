package depgraph

// refSet is a small set of references that keeps insertion order and stays
// cheap for the common case of a handful of members; past a threshold it adds
// an index so that removal stays O(1) for hubs with many dependants.
type refSet struct {
	list []ItemRef
	idx  map[ItemRef]int
}

const refSetIndexThreshold = 16

func (s *refSet) add(r ItemRef) {
	if s.has(r) {
		return
	}
	s.list = append(s.list, r)
	if s.idx != nil {
		s.idx[r] = len(s.list) - 1
	} else if len(s.list) > refSetIndexThreshold {
		s.idx = make(map[ItemRef]int, len(s.list)*2)
		for i, m := range s.list {
			s.idx[m] = i
		}
	}
}

func (s *refSet) has(r ItemRef) bool {
	if s.idx != nil {
		_, ok := s.idx[r]
		return ok
	}
	for _, m := range s.list {
		if m == r {
			return true
		}
	}
	return false
}

// remove deletes r by moving the last member into its place.
func (s *refSet) remove(r ItemRef) {
	i := -1
	if s.idx != nil {
		if j, ok := s.idx[r]; ok {
			i = j
			delete(s.idx, r)
		}
	} else {
		for j, m := range s.list {
			if m == r {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return
	}
	last := len(s.list) - 1
	if i != last {
		s.list[i] = s.list[last]
		if s.idx != nil {
			s.idx[s.list[i]] = i
		}
	}
	s.list[last] = ItemRef{}
	s.list = s.list[:last]
}

func (s *refSet) len() int { return len(s.list) }
