#if canImport(Glibc)
import Glibc
#endif
import CFileScan

/// One pass over a cache folder the way SDWebImage's `removeExpiredData`
/// enumerates it: recursively, skipping hidden (dot) files and folders, and
/// handing over regular files only, never directories, symlinks (not
/// followed) or special files.
///
/// Built for millions of files: directories are read with getdents64 into
/// one reused buffer, files are stat'ed with statx relative to the directory
/// fd, and a file's name reaches the visitor as a pointer into that buffer,
/// so no String or Foundation object is made per file. Only directories get
/// a String (their relative path), kept in `directories`.
///
/// Every folder is opened relative to its parent's descriptor with
/// O_NOFOLLOW (the root too: `FolderHandle`), and its device and inode are
/// kept in `identities`: whoever deletes in it later (FileRemover) opens it
/// the same way and checks it is still the folder listed. A caller that
/// acts during the walk uses `Entry.directoryFd`, the folder as listed.
public struct DirectoryWalker {
    /// A regular file, valid only during the visit call.
    public struct Entry {
        /// Index in `directories` of the folder that holds the file (0: the root).
        public var directoryIndex: Int
        /// That folder's path relative to the root ("" for the root).
        public var directoryPath: String
        /// That folder's descriptor, open for the time of the call: remove
        /// or open the file relative to it (`unlinkat`, `openat` with
        /// O_NOFOLLOW), never by path.
        public var directoryFd: Int32
        /// NUL-terminated name inside the directory, and its length.
        public var name: UnsafePointer<CChar>
        public var nameLength: Int
        public var info: imgwarm_stat

        public var nameString: String { String(cString: name) }
    }

    /// Relative paths of the folders walked: "" for the root, then `a`, `a/b`…
    public private(set) var directories: [String] = []
    /// Per folder of `directories`: the index of its parent (0 for the root
    /// itself) and what it was when listed.
    public private(set) var parents: [Int] = []
    public private(set) var identities: [FolderHandle.Identity] = []
    /// Called for each name that is neither a regular file nor a folder
    /// (a symbolic link, a FIFO, a socket, a device): `cache verify`
    /// reports them. The file type is the `S_IFMT` bits.
    public var onOther: ((_ directoryFd: Int32, _ directoryPath: String, _ name: UnsafePointer<CChar>, _ type: UInt32) -> Void)?
    /// Called after a sub-folder was walked, with its parent's descriptor
    /// and its name: `cache clear` removes it there when it is empty.
    public var onLeaveFolder: ((_ parentFd: Int32, _ name: String, _ index: Int, _ parentIndex: Int) -> Void)?
    /// Sub-folders that could not be opened or read (permissions, removed
    /// meanwhile); SDWebImage's enumerator skips them too.
    public private(set) var unreadableDirectories = 0
    public private(set) var firstDirectoryError: CacheError?
    /// False: the root folder's files only (Nuke's `DataCache` lists its
    /// folder without descending).
    public var descends = true

    public init() {}

    /// Walks `root` (opened here with O_NOFOLLOW: a symbolic link at the
    /// path is an error, not followed). Returns an error (rather than
    /// throwing it, so that the walk only rethrows the visitor's errors)
    /// when the root itself cannot be read; problems below the root are
    /// counted in `unreadableDirectories`.
    @discardableResult
    public mutating func walk(_ root: String, _ visit: (Entry) throws -> Void) rethrows -> CacheError? {
        let handle: FolderHandle
        do {
            handle = try FolderHandle.open(root, in: AT_FDCWD, path: root, listing: true)
        } catch let error as CacheError {
            return error.errno == ENOENT ? CacheFolder.openError(root, ENOENT) : error
        } catch {
            return CacheError(path: root, reason: "\(error)")
        }
        return try walk(handle, visit)
    }

    /// Walks the folder `root` was opened on.
    @discardableResult
    public mutating func walk(_ root: FolderHandle, _ visit: (Entry) throws -> Void) rethrows -> CacheError? {
        // A descriptor of its own: getdents moves the file offset.
        let rootFd = openat(root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if rootFd < 0 {
            let e = errno
            return CacheError(path: root.path, reason: "cannot read cache folder: \(errnoString(e))", errno: e)
        }
        defer { close(rootFd) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        directories = [""]
        parents = [0]
        identities = [root.identity]
        unreadableDirectories = 0
        firstDirectoryError = nil
        if let error = try walkDirectory(fd: rootFd, index: 0, buffer: buffer, visit) {
            return CacheError(path: root.path, reason: "cannot read cache folder: \(errnoString(error))", errno: error)
        }
        return nil
    }

    /// 256 KiB: a few syscalls for a directory of thousands of entries.
    static let bufferSize = 256 * 1024

    /// Reads one directory to its end (visiting its files), then descends into
    /// its sub-folders; the buffer is free again by then, so one buffer
    /// serves the whole walk. Returns an errno when reading failed.
    private mutating func walkDirectory(fd: Int32, index: Int, buffer: UnsafeMutableRawPointer,
                                        _ visit: (Entry) throws -> Void) rethrows -> Int32? {
        var subdirectories: [String] = []
        var info = imgwarm_stat()
        let parentPath = directories[index]
        while true {
            let count = imgwarm_getdents(fd, buffer, UInt(Self.bufferSize))
            if count < 0 { return Int32(-count) }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let record = buffer + offset
                offset += Int(imgwarm_dirent_reclen(record))
                let name = imgwarm_dirent_name(record)!
                // Hidden entries, "." and "..": SDWebImage's
                // NSDirectoryEnumerationSkipsHiddenFiles.
                if name.pointee == 0x2E { continue }
                let type = Int32(imgwarm_dirent_type(record))
                if type == Int32(IMGWARM_DT_DIR) {
                    // A folder is walked or, where the library lists one
                    // folder only (Nuke), not part of the cache at all.
                    if descends { subdirectories.append(String(cString: name)) }
                    continue
                }
                // Only regular files and entries of unknown type (some
                // filesystems leave d_type empty) need a stat.
                guard type == Int32(IMGWARM_DT_REG) || type == Int32(IMGWARM_DT_UNKNOWN) else {
                    if let onOther { onOther(fd, parentPath, name, Self.modeType(dirent: type)) }
                    continue
                }
                // Gone since getdents (a concurrent prune): not an entry.
                guard imgwarm_statat(fd, name, &info) == 0 else { continue }
                switch info.mode & UInt32(S_IFMT) {
                case UInt32(S_IFREG):
                    try visit(Entry(directoryIndex: index, directoryPath: parentPath, directoryFd: fd, name: name,
                                    nameLength: strlen(name), info: info))
                case UInt32(S_IFDIR):
                    if descends { subdirectories.append(String(cString: name)) }
                default:
                    onOther?(fd, parentPath, name, info.mode & UInt32(S_IFMT))
                }
            }
        }
        if !descends { return nil }
        for name in subdirectories {
            let path = parentPath.isEmpty ? name : parentPath + "/" + name
            // O_NOFOLLOW: a folder swapped for a symlink since getdents is
            // not followed out of the cache.
            let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if child < 0 {
                noteUnreadable(path, errno)
                continue
            }
            var raw = imgwarm_identity_t()
            if imgwarm_identity(child, &raw) != 0 {
                noteUnreadable(path, errno)
                close(child)
                continue
            }
            directories.append(path)
            parents.append(index)
            identities.append(FolderHandle.Identity(raw))
            let childIndex = directories.count - 1
            let error = try walkDirectory(fd: child, index: childIndex, buffer: buffer, visit)
            close(child)
            if let error { noteUnreadable(path, error) }
            onLeaveFolder?(fd, name, childIndex, index)
        }
        return nil
    }

    /// The S_IFMT bits for a d_type value.
    static func modeType(dirent type: Int32) -> UInt32 {
        switch type {
        case Int32(IMGWARM_DT_LNK): return UInt32(S_IFLNK)
        case Int32(IMGWARM_DT_FIFO): return UInt32(S_IFIFO)
        case Int32(IMGWARM_DT_SOCK): return UInt32(S_IFSOCK)
        case Int32(IMGWARM_DT_CHR): return UInt32(S_IFCHR)
        case Int32(IMGWARM_DT_BLK): return UInt32(S_IFBLK)
        default: return 0
        }
    }

    /// How `cache verify` names a file type that is no entry.
    public static func describe(type: UInt32) -> String {
        switch type {
        case UInt32(S_IFLNK): return "symbolic link"
        case UInt32(S_IFIFO): return "FIFO"
        case UInt32(S_IFSOCK): return "socket"
        case UInt32(S_IFCHR): return "character device"
        case UInt32(S_IFBLK): return "block device"
        default: return "special file"
        }
    }

    private mutating func noteUnreadable(_ path: String, _ error: Int32) {
        // Removed between getdents and openat: nothing was there to read.
        if error == ENOENT { return }
        unreadableDirectories += 1
        if firstDirectoryError == nil {
            firstDirectoryError = CacheError(path: path, reason: "cannot read folder: \(errnoString(error))", errno: error)
        }
    }
}

extension imgwarm_stat {
    /// Allocated bytes on disk: what SDWebImage sums (NSURLTotalFileAllocatedSizeKey).
    var allocatedBytes: Int64 { blocks * 512 }
}
