package projections

// Fields is what a read model keeps, for the tests outside the package.
func Fields(m ReadModel) []any { return m.(snapshotter).fields() }

// SnapshotFormat is the format this version writes, for the tests outside
// the package.
const SnapshotFormat = snapshotFormat
