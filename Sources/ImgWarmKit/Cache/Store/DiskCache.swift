#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import CFileScan

/// An error about the cache folder itself: exit status 3.
public struct CacheError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let reason: String
    public let errno: Int32
    public init(path: String, reason: String, errno: Int32 = 0) {
        self.path = path
        self.reason = reason
        self.errno = errno
    }
    public var isDiskFull: Bool { errno == ENOSPC || errno == EDQUOT }
    public var description: String { "\(path): \(reason)" }
}

func errnoString(_ e: Int32) -> String { String(cString: strerror(e)) }

/// An image library's disk cache folder (SDImageCache's disk side by
/// default: a flat folder of `<md5>[.<ext>]` files) plus imgwarm's hidden
/// state folder `.imgwarm/` (skipped by every library's expiry). File names,
/// dates and what counts as a hit come from the `layout`.
public final class DiskCache: @unchecked Sendable {
    public let directory: String
    public let layout: any CacheLayout
    public var stateDirectory: String { directory + "/.imgwarm" }
    public var tempDirectory: String { directory + "/.imgwarm/tmp" }

    /// Per-process counter for temp names; unique with the pid.
    private let tempCounter = AtomicCounter()
    // No lock of ours around the create and the rename. One was held there
    // (validation workers creating files at once made the kernel spin on
    // the directory's rwsem, `rwsem_spin_on_owner`), but with a download
    // thread per core storing small bodies, every clash on it put a network
    // loop to sleep: 3,111 futex sleeps in one 20,000-file run, and two
    // loops were no faster than one. Without it, two loops store at once
    // and the kernel's short spins cost less than those sleeps (README
    // "Performance", issue 15).

    /// Whether new files can be written unnamed and then linked in (see
    /// `storeUnnamed`); cleared for good the first time the filesystem
    /// says it has no O_TMPFILE, or /proc is missing where it is needed.
    private let unnamedFiles = Atomic<Bool>(true)

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
    }

    deinit {
        for (cacheFD, tempFD) in retiredFolders + (folders.map { [$0] } ?? []) {
            close(cacheFD)
            close(tempFD)
        }
    }

    /// `directory + "/"`, built once (callgrind: seven String appends per
    /// stored file before).
    private let entryPathPrefix: String

    /// O_PATH descriptors of the cache folder and its temp folder: a store
    /// creates and renames its file relative to them, so the kernel looks
    /// up one name instead of walking every component of two absolute
    /// paths per call (a C loop of 20,000 such stores on tmpfs: 0.305
    /// against 0.336 CPU-s). Opened at the first store; dropped when a
    /// folder is gone (ENOENT), and opened again from the paths after the
    /// folders are made again, as before. `folderLock` guards only these
    /// two variables, never a system call on them.
    /// A cache folder renamed away during a run keeps receiving the run's
    /// files (by path they would go to a new folder under the old name).
    private var folders: (cache: Int32, temp: Int32)?
    /// Dropped descriptors stay open until the cache object goes: a store
    /// on another thread may still be renaming relative to them, and a
    /// closed number could meanwhile name some other file.
    private var retiredFolders: [(cache: Int32, temp: Int32)] = []
    private let folderLock = NSLock()

    /// The folder descriptors, opened when there are none; nil when a
    /// folder cannot be opened.
    private func currentFolders() -> (cache: Int32, temp: Int32)? {
        folderLock.lock()
        let known = folders
        folderLock.unlock()
        if let known { return known }
        let cacheFD = imgwarm_open_folder(directory)
        guard cacheFD >= 0 else { return nil }
        let tempFD = imgwarm_open_folder(tempDirectory)
        guard tempFD >= 0 else {
            close(cacheFD)
            return nil
        }
        folderLock.lock()
        defer { folderLock.unlock() }
        // Another thread may have opened them meanwhile: keep one pair.
        if let other = folders {
            close(cacheFD)
            close(tempFD)
            return other
        }
        folders = (cacheFD, tempFD)
        return folders
    }

    /// Drops `dirs` when they are still the current descriptors.
    private func dropFolders(_ dirs: (cache: Int32, temp: Int32)) {
        folderLock.lock()
        defer { folderLock.unlock() }
        guard let current = folders, current == dirs else { return }
        retiredFolders.append(current)
        folders = nil
    }

    /// Creates the cache folder and the state folders when missing, and
    /// checks that they are writable.
    public func prepare() throws {
        for dir in [directory, stateDirectory, tempDirectory] {
            try Self.makeDirectories(dir)
        }
        if access(directory, W_OK) != 0 {
            throw CacheError(path: directory, reason: "not writable: \(errnoString(errno))", errno: errno)
        }
        if access(tempDirectory, W_OK) != 0 {
            throw CacheError(path: tempDirectory, reason: "not writable: \(errnoString(errno))", errno: errno)
        }
    }

    static func makeDirectories(_ path: String) throws {
        var st = stat()
        if stat(path, &st) == 0 {
            if (st.st_mode & S_IFMT) != S_IFDIR {
                throw CacheError(path: path, reason: "exists and is not a directory")
            }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectories(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            let e = errno
            throw CacheError(path: path, reason: "cannot create directory: \(errnoString(e))", errno: e)
        }
    }

    public func fileName(forKey key: String) -> CacheEntryName { layout.entryName(forKey: key) }

    /// The path imgwarm writes for `key`.
    public func path(forKey key: String) -> String {
        directory + "/" + fileName(forKey: key).storedName
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

    /// The existing entry for `name` and its length, from one stat per name
    /// tried (the prefetcher reports the size of cached entries). A file the
    /// layout does not count as live (a Kingfisher file past its deadline)
    /// is no entry: the app would fetch it again, and so does warm.
    public func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)? {
        for candidate in name.lookupNames {
            let p = entryPathPrefix + candidate
            var st = stat()
            if stat(p, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG {
                guard layout.isLive(st, now: CachePruner.clockNow()) else { continue }
                return (p, Int64(st.st_size))
            }
        }
        return nil
    }

    /// Whether the folder holds anything but hidden names (`.imgwarm`,
    /// `.DS_Store`): stops at the first such entry, so it costs one
    /// getdents call whatever the size of the cache.
    public func holdsEntries() -> Bool {
        guard let dir = opendir(directory) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { return true }
        }
        return false
    }

    /// Writes `bytes` as the entry for `name`: a temp file under
    /// `.imgwarm/tmp/`, then rename(2) into place, so a reader (the app,
    /// another run, prune) sees the old file or the whole new one, never a
    /// part. Returns the final path.
    @discardableResult
    public func store<C: ContiguousBytes>(_ bytes: C, for name: CacheEntryName, replacing previous: String? = nil,
                                          keepExisting: Bool = false) throws -> String {
        try store(bytes, for: name, replacing: previous, keepExisting: keepExisting, write: FileIO.writeAll)
    }

    /// `store` with the copy into the temp file done by `write` (the test
    /// store `SlowWriteStore` passes a slow one).
    func store<C: ContiguousBytes>(_ bytes: C, for name: CacheEntryName, replacing previous: String?, keepExisting: Bool,
                                   write: (Int32, UnsafeRawBufferPointer) -> Int32) throws -> String {
        let final = entryPathPrefix + name.storedName
        // No descriptors (a folder missing): the paths, whose ENOENT below
        // makes the folders again.
        let dirs = currentFolders() ?? (cache: AT_FDCWD, temp: AT_FDCWD)
        let finalRef = dirs.cache == AT_FDCWD ? (AT_FDCWD, final) : (dirs.cache, name.storedName)
        // A name already there wins (`keepExisting`: the cache was empty at
        // the start, so a file there now is another run's whole copy): an
        // unnamed file linked in does exactly that, and needs no temp name.
        if keepExisting, unnamedFiles.load(ordering: .relaxed),
           try storeUnnamed(bytes, in: dirs.cache, final: finalRef, finalPath: final, write: write) {
            removeReplaced(previous, by: final)
            return final
        }
        let tempName = Self.tempPrefix + String(tempCounter.next()) + ".tmp"
        let tempRef = dirs.temp == AT_FDCWD ? (AT_FDCWD, tempDirectory + "/" + tempName) : (dirs.temp, tempName)
        let fd = openat(tempRef.0, tempRef.1, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        let openError = errno
        if fd < 0 && openError == ENOENT && dirs.temp != AT_FDCWD { dropFolders(dirs) }
        if fd < 0 {
            if openError == ENOENT {
                // A concurrent `cache clear --all` removed the state folder.
                try Self.makeDirectories(tempDirectory)
                return try store(bytes, for: name, replacing: previous, keepExisting: keepExisting, write: write)
            }
            throw CacheError(path: tempDirectory + "/" + tempName, reason: "cannot create temp file: \(errnoString(openError))",
                             errno: openError)
        }
        var writeError = bytes.withUnsafeBytes { write(fd, $0) }
        // The layout's dates, set before the rename: a reader never sees the
        // file without them (a Kingfisher file with its deadline at now would
        // be expired to a concurrent prune).
        if writeError == 0 { writeError = setTimes(fd: fd) }
        // `keepExisting`: a file already under the name wins and ours is
        // dropped (see CacheLookups: a cache that was empty at the start is
        // not looked into per file, and a file there now was stored by
        // another run meanwhile, a whole copy of the same key). Otherwise
        // rename replaces, as a refresh or an expired entry needs.
        _ = try FileIO.closeAndRename(fd, writeError: writeError, temp: tempRef, final: finalRef, finalPath: final,
                                      keepExisting: keepExisting)
        removeReplaced(previous, by: final)
        return final
    }

    /// A bare-MD5 copy that the new file replaces (SDWebImage reads the
    /// extension name first) would only waste space.
    private func removeReplaced(_ previous: String?, by final: String) {
        if let previous, previous != final {
            unlink(previous)
        }
    }

    /// Writes a new entry as an unnamed file in the cache folder
    /// (O_TMPFILE) and links it in under its name. Like the temp file and
    /// rename it stands in for, no reader ever sees a part of the file, and
    /// a name already there (another run stored the same key meanwhile, a
    /// whole copy) wins. It takes one directory operation instead of two,
    /// and no cross-folder rename, the dearest of them (a lock for the whole
    /// filesystem plus both folders): perf gave the rename 9.5% of a
    /// `--no-validate` run's CPU on 20,000 thumbnails. A run that dies
    /// leaves no temp file behind. False when this filesystem cannot (the
    /// caller then writes through a temp file); true when the entry is in
    /// place.
    private func storeUnnamed<C: ContiguousBytes>(_ bytes: C, in cacheFD: Int32, final: (Int32, String), finalPath: String,
                                                  write: (Int32, UnsafeRawBufferPointer) -> Int32) throws -> Bool {
        let fd = imgwarm_open_unnamed(cacheFD, cacheFD == AT_FDCWD ? directory : ".")
        if fd < 0 {
            let e = errno
            if e == EOPNOTSUPP || e == EISDIR || e == EINVAL { unnamedFiles.store(false, ordering: .relaxed) }
            return false
        }
        var error = bytes.withUnsafeBytes { write(fd, $0) }
        if error == 0 { error = setTimes(fd: fd) }
        if error != 0 {
            close(fd)
            throw CacheError(path: finalPath, reason: "write failed: \(errnoString(error))", errno: error)
        }
        let linked = imgwarm_link_unnamed(fd, final.0, final.1)
        let closeError = close(fd) == 0 ? 0 : errno
        switch linked {
        case 0:
            if closeError != 0 {
                unlinkat(final.0, final.1, 0)
                throw CacheError(path: finalPath, reason: "write failed: \(errnoString(closeError))", errno: closeError)
            }
            return true
        case EEXIST:
            return true
        case ENOENT where access("/proc/self/fd", X_OK) == 0, ENOSPC, EDQUOT:
            // The folder went away (a concurrent `cache clear --all`), or
            // the disk is full: the temp path makes the folder again, or
            // reports the full disk as every other write does.
            return false
        default:
            // This system will not link unnamed files (no /proc, a
            // security module, a filesystem that answers EPERM or EINVAL):
            // the temp path from now on, which needs neither.
            unnamedFiles.store(false, ordering: .relaxed)
            return false
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
    /// run may not change keeps its dates.
    public func renewAccessTime(path: String) {
        if var times = layoutTimes() {
            _ = utimensat(AT_FDCWD, path, &times, 0)
        } else {
            _ = imgwarm_renew_atime(path)
        }
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
    /// SIGKILL, power loss). Temp files of live processes are kept: two runs
    /// may share a cache. Returns the number removed.
    @discardableResult
    public func cleanStaleTempFiles() -> Int {
        var removed = 0
        for name in Self.listDirectory(tempDirectory) where !name.hasPrefix(".") {
            let path = tempDirectory + "/" + name
            // Keep the temp files of this and other live runs.
            if !isStale(tempName: name, path: path) { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// Temp files a `verify` considers stray: those of dead processes.
    public func staleTempFiles() -> [String] {
        Self.listDirectory(tempDirectory).filter { name in
            !name.hasPrefix(".") && isStale(tempName: name, path: tempDirectory + "/" + name)
        }.map { tempDirectory + "/" + $0 }
    }

    /// Temp names are `PID-TAG-N.tmp`. TAG identifies the writing process
    /// beyond its pid: runs in other containers (Kubernetes pods sharing a
    /// volume, each with its own pid namespace, where imgwarm is often pid 1)
    /// have the same pids, and `PID-N.tmp` names collided there (O_EXCL
    /// failed: spurious `disk` failures) and one pod's clean-up deleted
    /// another's live temp files (its rename failed).
    /// `PID-TAG-`, computed once: every stored file needs one.
    static let tempPrefix = "\(getpid())-\(processTag)-"

    static let processTag: String = {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        // FNV-1a of the host name (the pod name in Kubernetes), then a
        // random part for hosts that share a name.
        var hash: UInt32 = 2_166_136_261
        for c in host.prefix(while: { $0 != 0 }) { hash = (hash ^ UInt32(UInt8(bitPattern: c))) &* 16_777_619 }
        return hex8(hash) + hex8(UInt32.random(in: 0...UInt32.max))
    }()

    static func hex8(_ v: UInt32) -> String {
        let h = String(v, radix: 16)
        return String(repeating: "0", count: 8 - h.count) + h
    }

    /// Temp files of other hosts are judged by age, not pid (their pids mean
    /// nothing here): a live run keeps a temp file for the time of one
    /// write, so one untouched this long belongs to a run that died.
    static let foreignTempMaxAge: Double = 15 * 60

    /// Whether a temp file belongs to no live run.
    func isStale(tempName name: String, path: String) -> Bool {
        let parts = name.split(separator: "-")
        guard let pid = parts.first.flatMap({ pid_t($0) }) else { return true }
        if parts.count >= 3 {
            let tag = parts[1]
            if tag == Substring(Self.processTag) { return false }  // this process
            if tag.count != 16 || tag.prefix(8) != Self.processTag.prefix(8) {
                var st = stat()
                guard stat(path, &st) == 0 else { return false }
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

    static func listDirectory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
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
