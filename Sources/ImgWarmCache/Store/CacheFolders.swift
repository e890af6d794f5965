#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport

/// The cache folder and imgwarm's two folders in it, each opened once
/// with O_NOFOLLOW: every name in the cache is looked up, created,
/// renamed and removed relative to these descriptors, never by path, so
/// a folder swapped for a symbolic link during a run leads nowhere.
/// A store also costs the kernel one name lookup instead of
/// a walk of every component of two absolute paths (a C loop of 20,000
/// stores on tmpfs: 0.305 against 0.336 CPU-s).
/// A cache folder renamed away during a run keeps receiving the run's
/// files (by path they would go to a new folder under the old name).
// @unchecked Sendable: `current` and `retired` only under `lock`; the rest is immutable.
public final class CacheFolders: @unchecked Sendable {
    public let directory: String
    public var stateDirectory: String { StateFolders.statePath(of: directory) }
    public var tempDirectory: String { StateFolders.tempPath(of: directory) }

    /// One set of opened folders (immutable; shared by the store threads).
    final class Handles: @unchecked Sendable {
        let root: FolderHandle
        /// `.imgwarm` and `.imgwarm/tmp`: nil when absent and not created
        /// (a cache only looked into), both set once prepared.
        let state: FolderHandle?
        let temp: FolderHandle?
        init(root: FolderHandle, state: FolderHandle?, temp: FolderHandle?) {
            self.root = root
            self.state = state
            self.temp = temp
        }
        var prepared: Bool { temp != nil }
    }

    private var current: Handles?
    /// Replaced sets stay open until the cache object goes: a store on
    /// another thread may still be renaming relative to them, and a
    /// closed number could meanwhile name some other file.
    private var retired: [Handles] = []
    /// Guards `current` and `retired` only, never a system call on them.
    private let lock = NSLock()

    /// `directory` made absolute, without trailing slashes.
    public init(directory: String) {
        var d = directory
        while d.count > 1 && d.hasSuffix("/") { d.removeLast() }
        if !d.hasPrefix("/") {
            d = FileManager.default.currentDirectoryPath + "/" + d
        }
        self.directory = d
    }

    private func install(_ new: Handles, replacing old: Handles?) {
        lock.lock()
        defer { lock.unlock() }
        if let current, current !== old { retired.append(current) }
        if let old { retired.append(old) }
        current = new
    }

    func handles() -> Handles? {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// The prepared folders, preparing them first when needed.
    func prepared() throws -> Handles {
        if let f = handles(), f.prepared { return f }
        try prepare()
        guard let f = handles() else { throw ImgWarmError.cache(path: directory, reason: "the cache folder is not open", errno: ENOENT) }
        return f
    }

    /// The descriptor entries are looked up relative to, and whether others
    /// may write that folder; the cache folder is opened (not created) on
    /// first use. AT_FDCWD when it cannot be opened: the lookups then go by
    /// path, still without following a link at the entry's name.
    func lookupFolder() -> (fd: Int32, othersMayWrite: Bool) {
        if let f = handles() { return (f.root.fd, f.root.identity.othersMayWrite) }
        guard let root = try? FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: false) else {
            return (AT_FDCWD, false)
        }
        lock.lock()
        if current == nil { current = Handles(root: root, state: nil, temp: nil) }
        let f = current ?? Handles(root: root, state: nil, temp: nil)
        lock.unlock()
        return (f.root.fd, f.root.identity.othersMayWrite)
    }

    /// Creates the cache folder and the state folders when missing, opens
    /// them, and checks them: the cache folder is no symbolic link, and
    /// `.imgwarm` and `.imgwarm/tmp` are real folders of the running user
    /// (or root) that nobody else may write; then that the cache and temp
    /// folders are writable. Throws a one-line `ImgWarmError` naming the path.
    public func prepare() throws {
        try StateFolders.makeDirectories(directory)
        let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: false)
        try prepare(in: root, replacing: handles())
    }

    private func prepare(in root: FolderHandle, replacing old: Handles?) throws {
        let (state, temp) = try StateFolders.make(in: root, directory: directory)
        if faccessat(root.fd, ".", W_OK, AT_EACCESS) != 0 {
            throw ImgWarmError.cache(path: directory, reason: "not writable: \(errnoString(errno))", errno: errno)
        }
        if faccessat(temp.fd, ".", W_OK, AT_EACCESS) != 0 {
            throw ImgWarmError.cache(path: tempDirectory, reason: "not writable: \(errnoString(errno))", errno: errno)
        }
        install(Handles(root: root, state: state, temp: temp), replacing: old)
    }

    /// Opens the cache as it is, creating nothing, for the `cache`
    /// commands that list, remove or check files: the cache folder (no
    /// symbolic link), and `.imgwarm` and `.imgwarm/tmp` when they exist,
    /// checked as `prepare` checks them. Nothing is deleted anywhere before
    /// this has passed.
    public func openExisting() throws {
        let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: true)
        let (state, temp) = try StateFolders.openExisting(in: root, directory: directory)
        install(Handles(root: root, state: state, temp: temp), replacing: handles())
    }

    /// The state folders made again after someone removed them during the
    /// run, relative to the cache folder's descriptor; by path when the
    /// cache folder itself was removed (as `mkdir -p` would). Checked as at
    /// the start.
    func recover(_ failed: Handles) throws {
        if let current = handles(), current !== failed { return }  // another thread did
        if failed.root.isRemoved {
            try StateFolders.makeDirectories(directory)
            let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: false)
            try prepare(in: root, replacing: failed)
        } else {
            try prepare(in: failed.root, replacing: failed)
        }
    }

    /// The cache folder, opened by `prepare` or `openExisting`.
    public var root: FolderHandle? { handles()?.root }
    /// `.imgwarm`, when it exists and was opened.
    public var state: FolderHandle? { handles()?.state }
    /// `.imgwarm/tmp`, when it exists and was opened.
    public var temp: FolderHandle? { handles()?.temp }

    /// Removes temp files left by runs that no longer exist (killed with
    /// SIGKILL, power loss), relative to the descriptor of `.imgwarm/tmp`
    /// (none opened: nothing to do). Temp files of live processes are
    /// kept: two runs may share a cache. Returns the number removed.
    @discardableResult
    public func cleanStaleTempFiles() -> Int {
        guard let temp else { return 0 }
        var removed = 0
        for name in TempFiles.staleNames(in: temp.fd) where unlinkat(temp.fd, name, 0) == 0 {
            removed += 1
        }
        return removed
    }

    /// The names in `.imgwarm/tmp` of regular files no live run owns.
    public func staleTempFileNames() -> [String] {
        guard let temp else { return [] }
        return TempFiles.staleNames(in: temp.fd)
    }

    /// Removes one stray temp file (a name from `staleTempFileNames`); 0 or
    /// the errno value.
    public func removeTempFile(_ name: String) -> Int32 {
        guard let temp else { return ENOENT }
        return unlinkat(temp.fd, name, 0) == 0 ? 0 : errno
    }
}
