// imgwarm builds on Linux only (see Package.swift): without this, a build
// elsewhere would fail on the first Glibc call with an error that does not
// say why.
#if !os(Linux)
#error("imgwarm builds on Linux only: it calls Glibc (getdents64, statx, O_TMPFILE, renameat2, mallopt)")
#endif
