package eventstore

import "errors"

// ErrDataDirInUse means another embedded server (another cargod, or a
// tool reading the store) has the data directory open.
var ErrDataDirInUse = errors.New("eventstore: data directory in use by another process")

// ErrDataDirUnusable means the data directory cannot be made (a path under
// a regular file, say).
var ErrDataDirUnusable = errors.New("eventstore: data directory cannot be made")

// lockFile, in the data directory, is locked while an embedded server runs.
const lockFile = "eventstore.lock"
