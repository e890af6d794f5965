#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import CFileScan
import ImgWarmSupport

/// The plain folder of files of the iOS layouts (SDImageCache's disk side:
/// a flat folder of `<md5>[.<ext>]` files; Kingfisher's; Nuke's): an entry
/// is a file under its name, its dates are the layout's, and prune is the
/// layout's expiry and size sweep (`CachePruner`).
// @unchecked Sendable: immutable but for the atomic `unnamedFiles`.
public final class FolderBackend: CacheBackend, @unchecked Sendable {
    public let layout: any FolderLayout
    let folders: CacheFolders
    let writer: FileWriter
    /// `directory + "/"`, built once (callgrind: seven String appends per
    /// stored file before).
    private let entryPathPrefix: String

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

    public init(folders: CacheFolders, layout: any FolderLayout, writer: FileWriter = .direct) {
        self.folders = folders
        self.layout = layout
        self.writer = writer
        entryPathPrefix = folders.directory + "/"
    }

    /// A plain folder keeps no index: nothing to read or write.
    public func open(writable: Bool) throws {}
    public func close() throws {}

    public var keepsResponses: Bool { false }
    public var walksSubfolders: Bool { layout.walksSubfolders }
    public func isEntryFile(folder: String, name: String) -> Bool { true }

    public func plannedPath(for name: CacheEntryName) -> String { entryPathPrefix + name.storedName }

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
    public func lookup(_ name: CacheEntryName) -> CachedEntry? {
        let (fd, othersMayWrite) = folders.lookupFolder()
        for candidate in name.lookupNames {
            var st = stat()
            let found = fd == AT_FDCWD
                ? fstatat(AT_FDCWD, entryPathPrefix + candidate, &st, AT_SYMLINK_NOFOLLOW)
                : fstatat(fd, candidate, &st, AT_SYMLINK_NOFOLLOW)
            guard found == 0,
                  Self.countsAsEntry(type: st.st_mode & S_IFMT, owner: st.st_uid, runningUser: runningUser,
                                     othersMayWrite: othersMayWrite),
                  layout.isLive(st, now: CachePruner.clockNow()) else { continue }
            return CachedEntry(name: candidate, path: entryPathPrefix + candidate, size: Int64(st.st_size))
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
    public func hit(_ name: CacheEntryName, entry: CachedEntry) {
        let (fd, _) = folders.lookupFolder()
        let file = fd == AT_FDCWD ? entry.path : entry.name
        if let times = layoutTimes() {
            _ = imgwarm_touch_at(fd, file, Int64(times[0].tv_sec), Int64(times[0].tv_nsec),
                                 Int64(times[1].tv_sec), Int64(times[1].tv_nsec), 1)
        } else {
            _ = imgwarm_touch_at(fd, file, 0, 0, 0, 0, 0)
        }
    }

    /// Relative to the descriptor of the folder the walk found it in, and
    /// only while the name holds the file that was judged (a concurrent
    /// warm may have stored a good one under the name since).
    public func remove(_ file: EntryFile) throws {
        var now = imgwarm_identity_t()
        guard imgwarm_identity_at(file.folder, file.name, &now) == 0,
              now.device == file.device, now.inode == file.inode else { return }
        if unlinkat(file.folder, file.name, 0) != 0 && errno != ENOENT {
            throw ImgWarmError.cache(path: file.path, reason: errnoString(errno), errno: errno)
        }
    }

    /// The layout's sweep (`CachePruner`), relative to the folder the
    /// session opened.
    public func prune(_ options: PruneOptions) throws -> PruneResult {
        guard let root = folders.root else {
            throw ImgWarmError.cache(path: folders.directory, reason: "the cache folder is not open", errno: ENOENT)
        }
        var options = options
        options.layout = layout
        return try CachePruner(root: root, options: options).run()
    }

    /// Writes `bytes` as the entry for `name`: a temp file under
    /// `.imgwarm/tmp/` (or an unnamed file), then into place atomically, so
    /// a reader (the app, another run, prune) sees the old file or the
    /// whole new one, never a part; whatever was at the name (a file of
    /// another run or of a neighbour, a symbolic link, a FIFO) is replaced,
    /// so the name holds the bytes written here when this returns. A folder
    /// at the name is not replaced: a `ImgWarmError` says so. `likelyNew`:
    /// the cache held no entry at the start, so the name is most likely
    /// free and an unnamed file is linked in. Returns the final path.
    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?,
                      replacing previous: String?, likelyNew: Bool) throws -> String {
        try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, recovered: false)
    }

    private func store(_ bytes: UnsafeRawBufferPointer, for name: CacheEntryName, replacing previous: String?, likelyNew: Bool,
                       recovered: Bool) throws -> String {
        let final = entryPathPrefix + name.storedName
        let dirs = try folders.prepared()
        let root = dirs.root.fd
        // The name is most likely free: an unnamed file linked in needs no
        // temp name and one directory operation less. A name taken since
        // (another run, a neighbour) falls through to the temp file, which
        // replaces it.
        if likelyNew, unnamedFiles.load(ordering: .relaxed) {
            switch try storeUnnamed(bytes, in: root, name: name.storedName, finalPath: final) {
            case .stored:
                removeReplaced(previous, by: final, in: root)
                return final
            case .folderGone where !recovered:
                try folders.recover(dirs)
                return try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, recovered: true)
            case .folderGone, .nameTaken, .unsupported:
                break
            }
        }
        guard let temp = dirs.temp?.fd else {
            throw ImgWarmError.cache(path: folders.tempDirectory, reason: "the temp folder is not open", errno: ENOENT)
        }
        // In a folder only this user may write, under a name no one can
        // guess: nothing planted there is ever written through.
        let created = FileIO.createExclusive(in: temp, attempts: 4) { TempFiles.runName(counter: tempCounter) }
        if created.fd < 0 {
            if created.error == ENOENT && !recovered {
                // Someone removed the state folder (`rm -rf`), or the cache
                // folder itself, during the run: made again, once.
                try folders.recover(dirs)
                return try store(bytes, for: name, replacing: previous, likelyNew: likelyNew, recovered: true)
            }
            throw ImgWarmError.cache(path: folders.tempDirectory + "/" + created.name,
                             reason: "cannot create temp file: \(errnoString(created.error))", errno: created.error)
        }
        let fd = created.fd
        var writeError = writer.write(fd, bytes)
        // The layout's dates, set before the rename: a reader never sees the
        // file without them (a Kingfisher file with its deadline at now would
        // be expired to a concurrent prune).
        if writeError == 0 { writeError = setTimes(fd: fd) }
        do {
            try FileIO.closeAndRename(fd, writeError: writeError, temp: (temp, created.name), final: (root, name.storedName),
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
    private func storeUnnamed(_ bytes: UnsafeRawBufferPointer, in root: Int32, name: String, finalPath: String) throws -> UnnamedStore {
        let fd = imgwarm_open_unnamed(root, ".")
        if fd < 0 {
            let e = errno
            if e == EOPNOTSUPP || e == EISDIR || e == EINVAL { unnamedFiles.store(false, ordering: .relaxed) }
            return e == ENOENT ? .folderGone : .unsupported
        }
        var error = writer.write(fd, bytes)
        if error == 0 { error = setTimes(fd: fd) }
        if error != 0 {
            Glibc.close(fd)
            throw ImgWarmError.cache(path: finalPath, reason: "write failed: \(errnoString(error))", errno: error)
        }
        let linked = imgwarm_link_unnamed(fd, root, name)
        let closeError = Glibc.close(fd) == 0 ? 0 : errno
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
}
