#if canImport(Glibc)
import Glibc
#endif

/// Every unlink and rename an index layout makes in the cache (a journal
/// rebuild, an evicted entry's value files, a dead edit's files, flutter's
/// files) goes through one of these, relative to a folder's descriptor and
/// by one name. The index takes one when it is made; the fuzz target's
/// harness passes one that checks each name instead of removing it.
protocol IndexFileRemover: Sendable {
    /// unlinkat(2): 0, or the errno.
    func unlink(_ name: String, in folder: Int32) -> Int32
    /// renameat(2): 0, or the errno.
    func rename(_ name: String, in from: Int32, to newName: String, in to: Int32) -> Int32
}

/// The remover of a run: the system calls, for names that are one plain
/// file name (`IndexNames.isPlainFileName`); any other name is refused
/// with EINVAL and never reaches the kernel.
struct SystemIndexFileRemover: IndexFileRemover {
    func unlink(_ name: String, in folder: Int32) -> Int32 {
        guard IndexNames.isPlainFileName(name) else { return EINVAL }
        return unlinkat(folder, name, 0) == 0 ? 0 : errno
    }

    func rename(_ name: String, in from: Int32, to newName: String, in to: Int32) -> Int32 {
        guard IndexNames.isPlainFileName(name), IndexNames.isPlainFileName(newName) else { return EINVAL }
        return renameat(from, name, to, newName) == 0 ? 0 : errno
    }
}

/// Names read from an index are data: before one is used as a file name
/// it must be one plain name inside the folder.
enum IndexNames {
    /// One name in a folder: not empty, at most 255 bytes, no `/`, no NUL,
    /// not `.` or `..`. (Hidden names are allowed here: imgwarm's own
    /// temp files start with a digit, the journal's backups are
    /// `journal.bkp`; flutter's relativePath is held to
    /// `isPlainEntryName`.)
    static func isPlainFileName<S: StringProtocol>(_ name: S) -> Bool {
        var count = 0
        for byte in name.utf8 {
            if byte == 0x2F || byte == 0 { return false }
            count += 1
        }
        return count > 0 && count <= 255 && name != "." && name != ".."
    }

    /// A flutter `relativePath`: a plain file name that is not hidden (the
    /// library makes `<uuid><.ext>`; a name starting with `.` is imgwarm's
    /// or nobody's).
    static func isPlainEntryName<S: StringProtocol>(_ name: S) -> Bool {
        isPlainFileName(name) && !name.hasPrefix(".")
    }
}
