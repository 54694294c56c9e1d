package kindkit

// IsAtLeastVersion0_1_0 is what code kindgen generates refers to, as
// connect-go's generated code refers to connect.IsAtLeastVersion1_13_0: code
// generated for a newer kindkit than the one it is built with does not
// compile, and the error names the version it needs, instead of failing at
// run time. A release that changes what generated code calls adds the next
// such constant and keeps the older ones, so older generated code still
// builds.
const IsAtLeastVersion0_1_0 = true
