#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmSupport

/// imgwarm's state folder `.imgwarm/` in a cache folder and its temp folder
/// `.imgwarm/tmp/`: their names, how they are made, opened and checked.
/// Every store (the plain folder's and each index's) and every command
/// that looks into a cache goes through here, so the rules live once:
/// made relative to the cache folder's descriptor, never followed when a
/// link stands at the name, and refused unless they are real folders of
/// the running user (or root) that nobody else may write.
package enum StateFolders {
    static let stateName = ".imgwarm"
    static let tempName = "tmp"

    static func statePath(of directory: String) -> String { directory + "/" + stateName }
    static func tempPath(of directory: String) -> String { directory + "/" + stateName + "/" + tempName }

    /// `.imgwarm` and `.imgwarm/tmp` made when missing and opened relative
    /// to `root`, both checked private.
    static func make(in root: FolderHandle, directory: String) throws -> (state: FolderHandle, temp: FolderHandle) {
        let state = try makeFolder(stateName, in: root.fd, path: statePath(of: directory))
        try state.requirePrivate()
        let temp = try makeFolder(tempName, in: state.fd, path: tempPath(of: directory))
        try temp.requirePrivate()
        return (state, temp)
    }

    /// `.imgwarm` and `.imgwarm/tmp` as they are (nil: absent), checked as
    /// `make` checks them.
    static func openExisting(in root: FolderHandle, directory: String) throws -> (state: FolderHandle?, temp: FolderHandle?) {
        guard exists(stateName, in: root.fd) else { return (nil, nil) }
        let state = try FolderHandle.open(stateName, in: root.fd, path: statePath(of: directory), listing: true)
        try state.requirePrivate()
        guard exists(tempName, in: state.fd) else { return (state, nil) }
        let temp = try FolderHandle.open(tempName, in: state.fd, path: tempPath(of: directory), listing: true)
        try temp.requirePrivate()
        return (state, temp)
    }

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

    /// The names in the folder at `path` (not followed when it is itself
    /// a symbolic link: no names then).
    package static func listDirectory(_ path: String) -> [String] {
        let fd = imgwarm_open_folder_at(AT_FDCWD, path, 1)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        return listDirectory(fd)
    }

    /// The names in the folder `dirfd` (read through a descriptor of its
    /// own, so the caller's stays where it is).
    package static func listDirectory(_ dirfd: Int32) -> [String] {
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
