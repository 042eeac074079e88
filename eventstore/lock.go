package eventstore

import "errors"

// ErrDataDirInUse means another embedded server (another cargod, or a
// tool reading the store) has the data directory open.
var ErrDataDirInUse = errors.New("eventstore: data directory in use by another process")

// lockFile, in the data directory, is locked while an embedded server runs.
const lockFile = "eventstore.lock"
