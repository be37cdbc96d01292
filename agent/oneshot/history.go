package oneshot

import "github.com/netagent/netagent/agent/versions"

// HistoryEntry is one version of `netagent history`.
type HistoryEntry struct {
	versions.Meta
	Current bool `json:"current"`
}

// History lists the versions kept in stateDir, oldest first, the current
// one (the newest) marked.
func History(stateDir string) ([]HistoryEntry, error) {
	st := versions.Open(stateDir, 0)
	defer st.Close()
	list, err := st.List()
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(list))
	for i, m := range list {
		out = append(out, HistoryEntry{Meta: m, Current: i == len(list)-1})
	}
	return out, nil
}
