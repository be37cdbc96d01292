package agent

import "errors"

// errNoIntent is returned for an apply without a document.
var errNoIntent = errors.New("apply needs an intent document")
