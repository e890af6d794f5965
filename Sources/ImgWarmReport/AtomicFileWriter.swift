#if canImport(Glibc)
import Glibc
#endif

import CFileScan
import ImgWarmSupport

/// Writes a file through a buffered stream to a temp file beside it and
/// renames it into place when done, so readers (CI, node_exporter) never
/// see half a report.
///
/// The temp file is `.<name>.tmp-<16 random hex digits>`, created with
/// O_EXCL | O_NOFOLLOW relative to a descriptor of the target's folder:
/// nothing planted at any name (a symbolic link where a `<name>.tmp-<pid>`
/// once went, predictable for imgwarm as pid 1 in a container) is ever
/// written through. The rename replaces whatever is at the
/// target's name, a link included, and never writes through it.
public final class AtomicFileWriter {
    public let path: String
    private let folder: Int32
    private let name: String
    private let tempName: String
    private var buffer: [UInt8] = []
    private let fd: Int32
    private var failed: Int32 = 0

    /// Why a file could not be written at `path`, checked before a run
    /// starts (nil: it can, as far as can be known now): its folder must
    /// exist and be writable, and the name must not be a folder.
    public static func targetProblem(_ path: String) -> String? {
        let slash = path.lastIndex(of: "/")
        let folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        if name.isEmpty || name == "." || name == ".." { return "not a file name" }
        let folder = imgwarm_open_folder(folderPath)
        if folder < 0 { return "cannot write into \(folderPath): \(errnoString(-folder))" }
        defer { close(folder) }
        if faccessat(folder, ".", W_OK, 0) != 0 { return "cannot write into \(folderPath): \(errnoString(errno))" }
        var st = stat()
        if fstatat(folder, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            return "is a folder"
        }
        return nil
    }

    /// Opens the target's folder and creates the temp file in it.
    public convenience init(path: String) throws {
        let held = try Self.take(path: path)
        self.init(path: path, held: held)
    }

    /// The folder and the temp file, held before the object exists: a
    /// throwing init of a fully initialized class runs `deinit`, which
    /// would close them a second time (by then perhaps another thread's
    /// files). `take` closes what it opened when it throws; from here on
    /// `deinit` or `commit` closes each once.
    private init(path: String, held: Held) {
        self.path = path
        folder = held.folder
        name = held.name
        tempName = held.tempName
        fd = held.fd
        buffer.reserveCapacity(1 << 16)
    }

    private struct Held {
        let folder: Int32
        let name: String
        let tempName: String
        let fd: Int32
    }

    private static func take(path: String) throws -> Held {
        let slash = path.lastIndex(of: "/")
        let folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        if name.isEmpty || name == "." || name == ".." {
            throw ImgWarmError.cache(path: path, reason: "cannot write: not a file name", errno: EISDIR)
        }
        // The folder as the user named it (links in it followed, as any
        // program given a path does); every name in it by descriptor.
        let folder = imgwarm_open_folder(folderPath)
        if folder < 0 {
            throw ImgWarmError.cache(path: path, reason: "cannot write: \(errnoString(-folder))", errno: -folder)
        }
        let created = FileIO.createExclusive(in: folder) { "." + name + ".tmp-" + Hex.padded(UInt64.random(in: 0...UInt64.max), digits: 16) }
        if created.fd < 0 {
            close(folder)
            throw ImgWarmError.cache(path: path, reason: "cannot write: \(errnoString(created.error))", errno: created.error)
        }
        return Held(folder: folder, name: name, tempName: created.name, fd: created.fd)
    }

    private var committed = false

    /// A writer dropped without `commit` (an error on the way) leaves no
    /// temp file behind.
    deinit {
        if !committed {
            close(fd)
            unlinkat(folder, tempName, 0)
        }
        close(folder)
    }

    public func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    private func flush() {
        guard failed == 0 else {
            buffer.removeAll(keepingCapacity: true)
            return
        }
        failed = buffer.withUnsafeBytes { FileIO.writeAll(fd, $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, closes and renames into place. Once: the temp file is
    /// closed by the first call, whatever its outcome.
    public func commit() throws {
        guard !committed else {
            throw ImgWarmError.cache(path: path, reason: "cannot write: already committed", errno: EBADF)
        }
        flush()
        committed = true
        try FileIO.closeAndRename(fd, writeError: failed, temp: (folder, tempName), final: (folder, name), finalPath: path)
    }
}
