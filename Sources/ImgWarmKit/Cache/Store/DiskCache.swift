#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import CFileScan

/// An image library's disk cache folder (SDImageCache's disk side by
/// default: a flat folder of `<md5>[.<ext>]` files) plus imgwarm's hidden
/// state folder `.imgwarm/` (skipped by every library's expiry). File names,
/// dates and what counts as a hit come from the `layout`.
// @unchecked Sendable: `folders` and `retiredFolders` only under `folderLock`; the rest is immutable or atomic.
public final class DiskCache: @unchecked Sendable {
    public let directory: String
    public let layout: any CacheLayout
    public var stateDirectory: String { directory + "/.imgwarm" }
    public var tempDirectory: String { directory + "/.imgwarm/tmp" }

    /// Per-process counter for temp names; the name carries a keyed hash of
    /// it (`imgwarm_unpredictable`), never the counter itself.
    private let tempCounter = AtomicCounter()
    // No lock of ours around the create and the rename. One was held there
    // (validation workers creating files at once made the kernel spin on
    // the directory's rwsem, `rwsem_spin_on_owner`), but with a download
    // thread per core storing small bodies, every clash on it put a network
    // loop to sleep: 3,111 futex sleeps in one 20,000-file run, and two
    // loops were no faster than one. Without it, two loops store at once
    // and the kernel's short spins cost less than those sleeps (CHANGELOG.md,
    // 0.1.0, Performance: Store).

    /// Whether new files can be written unnamed and then linked in (see
    /// `storeUnnamed`); cleared for good the first time the filesystem
    /// says it has no O_TMPFILE, or /proc is missing where it is needed.
    private let unnamedFiles = Atomic<Bool>(true)

    /// The running user: a file at an entry's name in a folder others may
    /// write counts only when this user owns it.
    private let runningUser = geteuid()

    /// Opens (without creating) the cache at `directory`.
    public init(directory: String, layout: any CacheLayout = SDWebImageLayout()) {
        self.layout = layout
        var d = directory
        while d.count > 1 && d.hasSuffix("/") { d.removeLast() }
        if !d.hasPrefix("/") {
            d = FileManager.default.currentDirectoryPath + "/" + d
        }
        self.directory = d
        entryPathPrefix = d + "/"
        index = layout.makeIndex(directory: d)
    }

    /// The layout's index (a DiskLruCache journal, flutter's database), nil
    /// for the iOS layouts: lookups, stores and hit renewals go through it.
    public let index: (any CacheIndex)?

    /// Reads the layout's index, and with `writable` makes or repairs it
    /// (warm, prune); a no-op without one. Throws `ImgWarmError` for an index
    /// of another library version, which is left as it is.
    public func openIndex(writable: Bool) throws {
        try index?.open(writable: writable)
    }

    /// Writes what the index still buffers (READ lines, touched dates).
    public func closeIndex() throws {
        try index?.close()
    }

    /// An entry the app has just read (a `cached` hit, a 304): the access
    /// time for the iOS layouts, the index's record of a read otherwise.
    public func recordHit(_ name: CacheEntryName, entry: ExistingEntry) {
        if let index { index.recordHit(name) } else { renewAccessTime(entry) }
    }

    /// `directory + "/"`, built once (callgrind: seven String appends per
    /// stored file before).
    private let entryPathPrefix: String

    /// The cache folder and imgwarm's two folders in it, each opened once
    /// with O_NOFOLLOW: every name in the cache is looked up, created,
    /// renamed and removed relative to these descriptors, never by path, so
    /// a folder swapped for a symbolic link during a run leads nowhere.
    /// A store also costs the kernel one name lookup instead of
    /// a walk of every component of two absolute paths (a C loop of 20,000
    /// stores on tmpfs: 0.305 against 0.336 CPU-s).
    /// A cache folder renamed away during a run keeps receiving the run's
    /// files (by path they would go to a new folder under the old name).
    final class Folders: @unchecked Sendable {  // immutable; shared by the store threads
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

    private var folders: Folders?
    /// Replaced folder sets stay open until the cache object goes: a store
    /// on another thread may still be renaming relative to them, and a
    /// closed number could meanwhile name some other file.
    private var retiredFolders: [Folders] = []
    /// Guards `folders` and `retiredFolders` only, never a system call on them.
    private let folderLock = NSLock()

    private func install(_ new: Folders, replacing old: Folders?) {
        folderLock.lock()
        defer { folderLock.unlock() }
        if let current = folders, current !== old { retiredFolders.append(current) }
        if let old { retiredFolders.append(old) }
        folders = new
    }

    private func currentFolders() -> Folders? {
        folderLock.lock()
        defer { folderLock.unlock() }
        return folders
    }

    /// The prepared folders, preparing them first when needed.
    private func preparedFolders() throws -> Folders {
        if let f = currentFolders(), f.prepared { return f }
        try prepare()
        return currentFolders()!
    }

    /// The descriptor entries are looked up relative to, and whether others
    /// may write that folder; the cache folder is opened (not created) on
    /// first use. AT_FDCWD when it cannot be opened: the lookups then go by
    /// path, still without following a link at the entry's name.
    private func lookupFolder() -> (fd: Int32, othersMayWrite: Bool) {
        if let f = currentFolders() { return (f.root.fd, f.root.identity.othersMayWrite) }
        guard let root = try? FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: false) else {
            return (AT_FDCWD, false)
        }
        folderLock.lock()
        if folders == nil { folders = Folders(root: root, state: nil, temp: nil) }
        let f = folders!
        folderLock.unlock()
        return (f.root.fd, f.root.identity.othersMayWrite)
    }

    /// Creates the cache folder and the state folders when missing, opens
    /// them, and checks them: the cache folder is no symbolic link, and
    /// `.imgwarm` and `.imgwarm/tmp` are real folders of the running user
    /// (or root) that nobody else may write; then that the cache and temp
    /// folders are writable. Throws a one-line `ImgWarmError` naming the path.
    public func prepare() throws {
        try Self.makeDirectories(directory)
        let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: false)
        try prepare(in: root, replacing: currentFolders())
    }

    /// `.imgwarm` and `.imgwarm/tmp` made (when missing) and opened
    /// relative to `root`.
    private func prepare(in root: FolderHandle, replacing old: Folders?) throws {
        let state = try Self.makeFolder(".imgwarm", in: root.fd, path: stateDirectory)
        try state.requirePrivate()
        let temp = try Self.makeFolder("tmp", in: state.fd, path: tempDirectory)
        try temp.requirePrivate()
        if faccessat(root.fd, ".", W_OK, AT_EACCESS) != 0 {
            throw ImgWarmError.cache(path: directory, reason: "not writable: \(errnoString(errno))", errno: errno)
        }
        if faccessat(temp.fd, ".", W_OK, AT_EACCESS) != 0 {
            throw ImgWarmError.cache(path: tempDirectory, reason: "not writable: \(errnoString(errno))", errno: errno)
        }
        install(Folders(root: root, state: state, temp: temp), replacing: old)
    }

    /// Opens the cache as it is, creating nothing, for the `cache`
    /// commands that list, remove or check files: the cache folder (no
    /// symbolic link), and `.imgwarm` and `.imgwarm/tmp` when they exist,
    /// checked as `prepare` checks them. Nothing is deleted anywhere before
    /// this has passed.
    public func openExisting() throws {
        let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: true)
        var state: FolderHandle?
        var temp: FolderHandle?
        if Self.exists(".imgwarm", in: root.fd) {
            state = try FolderHandle.open(".imgwarm", in: root.fd, path: stateDirectory, listing: true)
            try state!.requirePrivate()
            if Self.exists("tmp", in: state!.fd) {
                temp = try FolderHandle.open("tmp", in: state!.fd, path: tempDirectory, listing: true)
                try temp!.requirePrivate()
            }
        }
        install(Folders(root: root, state: state, temp: temp), replacing: currentFolders())
    }

    /// The cache folder, opened by `prepare` or `openExisting`.
    public var rootFolder: FolderHandle? { currentFolders()?.root }
    /// `.imgwarm`, when it exists and was opened.
    public var stateFolder: FolderHandle? { currentFolders()?.state }
    /// `.imgwarm/tmp`, when it exists and was opened.
    public var tempFolder: FolderHandle? { currentFolders()?.temp }

    static func exists(_ name: String, in dirfd: Int32) -> Bool {
        var raw = imgwarm_identity_t()
        return imgwarm_identity_at(dirfd, name, &raw) != ENOENT
    }

    /// mkdirat then an O_NOFOLLOW open: a link planted at the name makes
    /// mkdirat fail with EEXIST and the open refuse it.
    static func makeFolder(_ name: String, in parent: Int32, path: String) throws -> FolderHandle {
        if mkdirat(parent, name, 0o755) != 0 && errno != EEXIST {
            let e = errno
            throw ImgWarmError.cache(path: path, reason: "cannot create directory: \(errnoString(e))", errno: e)
        }
        return try FolderHandle.open(name, in: parent, path: path, listing: true)
    }

    /// The folders a user named, made by path as `mkdir -p` does (the last
    /// one is then opened without following a link).
    static func makeDirectories(_ path: String) throws {
        var st = stat()
        if stat(path, &st) == 0 {
            if (st.st_mode & S_IFMT) != S_IFDIR {
                throw ImgWarmError.cache(path: path, reason: "exists and is not a directory")
            }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectories(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            let e = errno
            throw ImgWarmError.cache(path: path, reason: "cannot create directory: \(errnoString(e))", errno: e)
        }
    }

    public func fileName(forKey key: String) -> CacheEntryName { layout.entryName(forKey: key) }

    /// The path imgwarm writes for `key`.
    public func path(forKey key: String) -> String { path(for: fileName(forKey: key)) }

    /// The path imgwarm writes for an entry (flutter: its files folder, the
    /// name being chosen at the store).
    public func path(for name: CacheEntryName) -> String {
        if let index { return index.plannedPath(for: name) }
        return entryPathPrefix + name.storedName
    }

    /// The path of an existing entry for `key` (SDWebImage: `<md5>.<ext>`
    /// first, then the bare `<md5>` fallback it also reads). Nil when none
    /// exists or the layout says the file no longer counts (expired).
    public func existingPath(forKey key: String) -> String? {
        existingPath(for: fileName(forKey: key))
    }

    public func existingPath(for name: CacheEntryName) -> String? {
        existingEntry(for: name)?.path
    }

    /// A file that counts as the entry: its name in the cache folder, its
    /// path (for reports) and its length.
    public struct ExistingEntry: Sendable, Equatable {
        public var name: String
        public var path: String
        public var size: Int64
    }

    /// The existing entry for `name` and its length, from one stat per name
    /// tried (the prefetcher reports the size of cached entries), relative
    /// to the cache folder's descriptor and without following a link.
    /// What is not an entry: a file the layout does not count as live (a
    /// Kingfisher file past its deadline: the app would fetch it again, and
    /// so does warm); anything but a regular file (a symbolic link, a FIFO,
    /// a folder: the app would read through a link to wherever it points);
    /// and, in a cache folder others may write, a file the running user
    /// does not own (anyone could have put it there). Such names are
    /// downloaded, and the new file replaces what is there atomically.
    /// The layouts with an index (a DiskLruCache journal, flutter's
    /// database) answer from it.
    public func existingEntry(for name: CacheEntryName) -> ExistingEntry? {
        if let index {
            return index.existingEntry(for: name).map { found in
                let relative = found.path.hasPrefix(entryPathPrefix) ? String(found.path.dropFirst(entryPathPrefix.count)) : found.path
                return ExistingEntry(name: relative, path: found.path, size: found.size)
            }
        }
        let (fd, othersMayWrite) = lookupFolder()
        for candidate in name.lookupNames {
            var st = stat()
            let found = fd == AT_FDCWD
                ? fstatat(AT_FDCWD, entryPathPrefix + candidate, &st, AT_SYMLINK_NOFOLLOW)
                : fstatat(fd, candidate, &st, AT_SYMLINK_NOFOLLOW)
            guard found == 0,
                  Self.countsAsEntry(type: st.st_mode & S_IFMT, owner: st.st_uid, runningUser: runningUser,
                                     othersMayWrite: othersMayWrite),
                  layout.isLive(st, now: CachePruner.clockNow()) else { continue }
            return ExistingEntry(name: candidate, path: entryPathPrefix + candidate, size: Int64(st.st_size))
        }
        return nil
    }

    /// Whether what is at an entry's name may count as the entry: a regular
    /// file (a link would lead the app's read anywhere; a FIFO or a folder
    /// is no image), and, in a folder others may write, one the running
    /// user owns (anyone could have put another there).
    static func countsAsEntry(type: mode_t, owner: uid_t, runningUser: uid_t, othersMayWrite: Bool) -> Bool {
        type == S_IFREG && (!othersMayWrite || owner == runningUser)
    }

    /// Whether the folder holds anything but hidden names (`.imgwarm`,
    /// `.DS_Store`): stops at the first such entry, so it costs one
    /// getdents call whatever the size of the cache.
    public func holdsEntries() -> Bool {
        let (root, _) = lookupFolder()
        let fd = root == AT_FDCWD ? -1 : openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let dir = fdopendir(fd) else {
            if fd >= 0 { close(fd) }
            return false
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { return true }
        }
        return false
    }

    /// Writes `bytes` as the entry for `name`: a temp file under
    /// `.imgwarm/tmp/` (or an unnamed file), then into place atomically, so
    /// a reader (the app, another run, prune) sees the old file or the
    /// whole new one, never a part; whatever was at the name (a file of
    /// another run or of a neighbour, a symbolic link, a FIFO) is replaced,
    /// so the name holds the bytes written here when this returns. A folder
    /// at the name is not replaced: an `ImgWarmError` says so. `likelyNew`:
    /// the cache held no entry at the start, so the name is most likely
    /// free and an unnamed file is linked in. Returns the final path.
    @discardableResult
    public func store<C: ContiguousBytes>(_ bytes: C, for name: CacheEntryName, replacing previous: String? = nil,
                                          likelyNew: Bool = false) throws -> String {
        try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, write: FileIO.writeAll)
    }

    /// `store` with the copy into the temp file done by `write` (the test
    /// store `SlowWriteStore` passes a slow one).
    func store<C: ContiguousBytes>(_ bytes: C, for name: CacheEntryName, replacing previous: String?, likelyNew: Bool,
                                   response: StoredResponse? = nil,
                                   write: (Int32, UnsafeRawBufferPointer) -> Int32) throws -> String {
        if let index {
            // The index's own store (journal or database rows with the
            // file); `keepExisting`: a cache empty at the start keeps a
            // file found there (`likelyNew`).
            try bytes.withUnsafeBytes {
                try index.store($0, as: name, response: response, keepExisting: likelyNew, write: write)
            }
            return index.existingEntry(for: name)?.path ?? index.plannedPath(for: name)
        }
        return try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, write: write, recovered: false)
    }

    private func store<C: ContiguousBytes>(_ bytes: C, for name: CacheEntryName, replacing previous: String?, likelyNew: Bool,
                                           write: (Int32, UnsafeRawBufferPointer) -> Int32, recovered: Bool) throws -> String {
        let final = entryPathPrefix + name.storedName
        let dirs = try preparedFolders()
        let root = dirs.root.fd
        // The name is most likely free: an unnamed file linked in needs no
        // temp name and one directory operation less. A name taken since
        // (another run, a neighbour) falls through to the temp file, which
        // replaces it.
        if likelyNew, unnamedFiles.load(ordering: .relaxed) {
            switch try storeUnnamed(bytes, in: root, name: name.storedName, finalPath: final, write: write) {
            case .stored:
                removeReplaced(previous, by: final, in: root)
                return final
            case .folderGone where !recovered:
                try recover(dirs)
                return try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, write: write, recovered: true)
            case .folderGone, .nameTaken, .unsupported:
                break
            }
        }
        let temp = dirs.temp!.fd
        var tempName = ""
        var fd: Int32 = -1
        var openError: Int32 = 0
        // O_EXCL | O_NOFOLLOW in a folder only this user may write, under a
        // name no one can guess: nothing planted there is ever written
        // through. EEXIST (a leftover of a run with the same pid in another
        // container) just takes the next name.
        for _ in 0..<4 {
            tempName = Self.tempPrefix + FixedHex.digits16(imgwarm_unpredictable(tempCounter.next())) + ".tmp"
            fd = openat(temp, tempName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            openError = errno
            if fd >= 0 || openError != EEXIST { break }
        }
        if fd < 0 {
            if openError == ENOENT && !recovered {
                // Someone removed the state folder (`rm -rf`), or the cache
                // folder itself, during the run: made again, once.
                try recover(dirs)
                return try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, write: write, recovered: true)
            }
            throw ImgWarmError.cache(path: tempDirectory + "/" + tempName, reason: "cannot create temp file: \(errnoString(openError))",
                             errno: openError)
        }
        var writeError = bytes.withUnsafeBytes { write(fd, $0) }
        // The layout's dates, set before the rename: a reader never sees the
        // file without them (a Kingfisher file with its deadline at now would
        // be expired to a concurrent prune).
        if writeError == 0 { writeError = setTimes(fd: fd) }
        do {
            try FileIO.closeAndRename(fd, writeError: writeError, temp: (temp, tempName), final: (root, name.storedName),
                                      finalPath: final)
        } catch let error as ImgWarmError where error.errno == EISDIR || error.errno == ENOTEMPTY || error.errno == EEXIST {
            throw ImgWarmError.cache(path: final, reason: "a folder is at the entry's name; imgwarm does not replace it", errno: error.errno)
        } catch let error as ImgWarmError where error.errno == EPERM {
            // A sticky folder (mode +t, as /tmp): only a file's owner (or
            // root) may replace it, and the file at the name is not ours.
            var st = stat()
            if fstatat(root, name.storedName, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != runningUser {
                throw ImgWarmError.cache(path: final, reason: "another user's file (uid \(st.st_uid)) is at the entry's name in a sticky "
                    + "folder; only its owner or root may replace it", errno: EPERM)
            }
            throw error
        }
        removeReplaced(previous, by: final, in: root)
        return final
    }

    /// The state folders made again after someone removed them during the
    /// run, relative to the cache folder's descriptor; by path when the
    /// cache folder itself was removed (as `mkdir -p` would). Checked as at
    /// the start.
    private func recover(_ failed: Folders) throws {
        if let current = currentFolders(), current !== failed { return }  // another thread did
        if failed.root.isRemoved {
            try Self.makeDirectories(directory)
            let root = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: false)
            try prepare(in: root, replacing: failed)
        } else {
            try prepare(in: failed.root, replacing: failed)
        }
    }

    /// A bare-MD5 copy that the new file replaces (SDWebImage reads the
    /// extension name first) would only waste space.
    private func removeReplaced(_ previous: String?, by final: String, in root: Int32) {
        guard let previous, previous != final, previous.hasPrefix(entryPathPrefix) else { return }
        unlinkat(root, String(previous.dropFirst(entryPathPrefix.count)), 0)
    }

    enum UnnamedStore { case stored, nameTaken, folderGone, unsupported }

    /// Writes a new entry as an unnamed file in the cache folder
    /// (O_TMPFILE) and links it in under its name. Like the temp file and
    /// rename it stands in for, no reader ever sees a part of the file.
    /// It takes one directory operation instead of two, and no cross-folder
    /// rename, the dearest of them (a lock for the whole filesystem plus
    /// both folders): perf gave the rename 9.5% of a `--no-validate` run's
    /// CPU on 20,000 thumbnails. A run that dies leaves no temp file behind.
    /// linkat never replaces a name: `.nameTaken` when one is there (the
    /// caller then replaces it through a temp file); `.unsupported` when
    /// this filesystem cannot (the temp file then, from now on).
    private func storeUnnamed<C: ContiguousBytes>(_ bytes: C, in root: Int32, name: String, finalPath: String,
                                                  write: (Int32, UnsafeRawBufferPointer) -> Int32) throws -> UnnamedStore {
        let fd = imgwarm_open_unnamed(root, ".")
        if fd < 0 {
            let e = errno
            if e == EOPNOTSUPP || e == EISDIR || e == EINVAL { unnamedFiles.store(false, ordering: .relaxed) }
            return e == ENOENT ? .folderGone : .unsupported
        }
        var error = bytes.withUnsafeBytes { write(fd, $0) }
        if error == 0 { error = setTimes(fd: fd) }
        if error != 0 {
            close(fd)
            throw ImgWarmError.cache(path: finalPath, reason: "write failed: \(errnoString(error))", errno: error)
        }
        let linked = imgwarm_link_unnamed(fd, root, name)
        let closeError = close(fd) == 0 ? 0 : errno
        switch linked {
        case 0:
            if closeError != 0 {
                unlinkat(root, name, 0)
                throw ImgWarmError.cache(path: finalPath, reason: "write failed: \(errnoString(closeError))", errno: closeError)
            }
            return .stored
        case EEXIST:
            return .nameTaken
        case ENOENT where access("/proc/self/fd", X_OK) == 0, ENOSPC, EDQUOT:
            // The folder went away, or the disk is full: the temp path
            // makes the folder again, or reports the full disk as every
            // other write does.
            return .unsupported
        default:
            // This system will not link unnamed files (no /proc, a
            // security module, a filesystem that answers EPERM or EINVAL):
            // the temp path from now on, which needs neither.
            unnamedFiles.store(false, ordering: .relaxed)
            return .unsupported
        }
    }

    /// The dates of an entry the app has just read: what `warm` gives a
    /// `cached` hit and a 304 under `--refresh`. SDWebImage renews the
    /// access date only (`SDDiskCache.m`, `dataForKey:` sets
    /// `NSURLContentAccessDateKey` after reading, and leaves the file
    /// untouched on a 304), and so does a read in Nuke's folder: the access
    /// time becomes now, the modification time stays (`UTIME_OMIT`).
    /// Kingfisher extends the deadline on a hit (`DiskStorage`,
    /// `extendingExpiration`): its layout's dates. Best effort: a file the
    /// run may not change keeps its dates. Relative to the cache folder and
    /// without following a link that replaced the file since the lookup.
    public func renewAccessTime(_ entry: ExistingEntry) {
        let (fd, _) = lookupFolder()
        let name = fd == AT_FDCWD ? entry.path : entry.name
        if let times = layoutTimes() {
            _ = imgwarm_touch_at(fd, name, Int64(times[0].tv_sec), Int64(times[0].tv_nsec),
                                 Int64(times[1].tv_sec), Int64(times[1].tv_nsec), 1)
        } else {
            _ = imgwarm_touch_at(fd, name, 0, 0, 0, 0, 0)
        }
    }

    /// `renewAccessTime` for the file at `path` (in the cache folder:
    /// relative to its descriptor), without following a link.
    public func renewAccessTime(path: String) {
        let name = path.hasPrefix(entryPathPrefix) ? String(path.dropFirst(entryPathPrefix.count)) : path
        renewAccessTime(ExistingEntry(name: name, path: path, size: 0))
    }

    /// Sets the layout's dates on a file being stored; 0 or an errno.
    private func setTimes(fd: Int32) -> Int32 {
        guard var times = layoutTimes() else { return 0 }
        return futimens(fd, &times) == 0 ? 0 : errno
    }

    /// [access, modification] for a file stored now, nil when both are now.
    private func layoutTimes() -> [timespec]? {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return layout.fileTimes(storedAt: now).map { [$0.access, $0.modification] }
    }

    /// Removes temp files left by runs that no longer exist (killed with
    /// SIGKILL, power loss), relative to the descriptor of `.imgwarm/tmp`
    /// (`prepare` or `openExisting` opened and checked it; none: nothing to
    /// do). Temp files of live processes are kept: two runs may share a
    /// cache. Returns the number removed.
    @discardableResult
    public func cleanStaleTempFiles() -> Int {
        guard let temp = tempFolder else { return 0 }
        var removed = 0
        for name in staleTempFileNames() where unlinkat(temp.fd, name, 0) == 0 {
            removed += 1
        }
        return removed
    }

    /// Temp files a `verify` considers stray: those of dead processes (paths).
    public func staleTempFiles() -> [String] {
        staleTempFileNames().map { tempDirectory + "/" + $0 }
    }

    /// The names in `.imgwarm/tmp` of regular files no live run owns.
    public func staleTempFileNames() -> [String] {
        guard let temp = tempFolder else { return [] }
        return Self.listDirectory(temp.fd).filter { name in
            !name.hasPrefix(".") && isStale(tempName: name, in: temp.fd)
        }
    }

    /// Removes one stray temp file (a name from `staleTempFileNames`); 0 or
    /// the errno value.
    public func removeTempFile(_ name: String) -> Int32 {
        guard let temp = tempFolder else { return ENOENT }
        return unlinkat(temp.fd, name, 0) == 0 ? 0 : errno
    }

    /// Temp names are `PID-TAG-TOKEN.tmp`. TAG identifies the writing process
    /// beyond its pid: runs in other containers (Kubernetes pods sharing a
    /// volume, each with its own pid namespace, where imgwarm is often pid 1)
    /// have the same pids, and `PID-N.tmp` names collided there (O_EXCL
    /// failed: spurious `disk` failures) and one pod's clean-up deleted
    /// another's live temp files (its rename failed). TOKEN is a keyed hash
    /// of a counter: the next name cannot be guessed from earlier ones.
    /// `PID-TAG-`, computed once: every stored file needs one.
    static let tempPrefix = "\(getpid())-\(processTag)-"

    static let processTag: String = {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        // FNV-1a of the host name (the pod name in Kubernetes), then a
        // random part for hosts that share a name.
        var hash: UInt32 = 2_166_136_261
        for c in host.prefix(while: { $0 != 0 }) { hash = (hash ^ UInt32(UInt8(bitPattern: c))) &* 16_777_619 }
        return FixedHex.digits8(hash) + FixedHex.digits8(UInt32.random(in: 0...UInt32.max))
    }()

    /// Temp files of other hosts are judged by age, not pid (their pids mean
    /// nothing here): a live run keeps a temp file for the time of one
    /// write, so one untouched this long belongs to a run that died.
    static let foreignTempMaxAge: Double = 15 * 60

    /// Whether `name` in the temp folder is a regular file no live run owns.
    func isStale(tempName name: String, in folder: Int32) -> Bool {
        var st = stat()
        guard fstatat(folder, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
        // Folders and links are nothing a run leaves; they are left alone.
        guard (st.st_mode & S_IFMT) == S_IFREG else { return false }
        let parts = name.split(separator: "-")
        guard let pid = parts.first.flatMap({ pid_t($0) }) else { return true }
        if parts.count >= 3 {
            let tag = parts[1]
            if tag == Substring(Self.processTag) { return false }  // this process
            if tag.count != 16 || tag.prefix(8) != Self.processTag.prefix(8) {
                return Date().timeIntervalSince1970 - Double(st.st_mtim.tv_sec) > Self.foreignTempMaxAge
            }
        }
        // This host (or a name from before tags): the pid says.
        return !Self.processIsAlive(pid)
    }

    static func ownerPid(ofTempName name: String) -> pid_t? {
        guard let dash = name.firstIndex(of: "-"), let pid = pid_t(name[..<dash]) else { return nil }
        return pid
    }

    static func processIsAlive(_ pid: pid_t) -> Bool {
        if kill(pid, 0) == 0 { return true }
        return errno == EPERM
    }

    /// The names in the folder at `path` (not followed when it is itself
    /// a symbolic link: no names then).
    static func listDirectory(_ path: String) -> [String] {
        let fd = imgwarm_open_folder_at(AT_FDCWD, path, 1)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        return listDirectory(fd)
    }

    /// The names in the folder `dirfd` (read through a descriptor of its
    /// own, so the caller's stays where it is).
    static func listDirectory(_ dirfd: Int32) -> [String] {
        let fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        guard let dir = fdopendir(fd) else {
            close(fd)
            return []
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let ent = readdir(dir) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }
}

/// A lock-protected counter (the engine's threads share a cache object).
// @unchecked Sendable: `value` only under `lock`.
final class AtomicCounter: @unchecked Sendable {
    private var value: UInt64 = 0
    private let lock = NSLock()
    func next() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
