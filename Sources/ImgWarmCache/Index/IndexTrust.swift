#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// Whether an index file (a journal, its backups, flutter's database and
/// its side files) may be read and acted on. A DiskLruCache journal names
/// the files to delete, flutter's database too: in a folder other users
/// may write, one of them could plant an index that makes a run delete,
/// rename or report what they choose. The rule (docs/security.md):
/// - a file of the running user is trusted;
/// - in a world-writable folder (sticky or not), no other file is;
/// - in a group-writable folder that is not world-writable, a file is
///   trusted when the folder is setgid (a team folder) and the file's owner
///   is a member of the folder's group (primary or supplementary, in the
///   group database); the keys in it are checked all the same;
/// - in a folder only its owner may write, every file is (only the owner
///   and root can have put it there).
enum IndexTrust {
    /// The decision, from the file's owner and the folder's mode.
    static func trusts(owner: uid_t, runningUser: uid_t, folderMode: UInt32, ownerInFolderGroup: Bool) -> Bool {
        if owner == runningUser { return true }
        if folderMode & UInt32(S_IWOTH) != 0 { return false }
        if folderMode & UInt32(S_IWGRP) != 0 { return folderMode & UInt32(S_ISGID) != 0 && ownerInFolderGroup }
        return true
    }

    /// Whether `user` is in `group`: its primary group (the password
    /// database) or a supplementary member (the group database).
    static func isMember(_ user: uid_t, of group: gid_t) -> Bool {
        var buffer = [CChar](repeating: 0, count: 1 << 16)
        var passwd = Glibc.passwd()
        var found: UnsafeMutablePointer<Glibc.passwd>?
        guard getpwuid_r(user, &passwd, &buffer, buffer.count, &found) == 0, let entry = found else { return false }
        if entry.pointee.pw_gid == group { return true }
        guard let namePointer = entry.pointee.pw_name else { return false }
        let name = String(cString: namePointer)
        var groupBuffer = [CChar](repeating: 0, count: 1 << 18)
        var groupEntry = Glibc.group()
        var groupFound: UnsafeMutablePointer<Glibc.group>?
        guard getgrgid_r(group, &groupEntry, &groupBuffer, groupBuffer.count, &groupFound) == 0,
              let g = groupFound, var member = g.pointee.gr_mem else { return false }
        while let m = member.pointee {
            if String(cString: m) == name { return true }
            member += 1
        }
        return false
    }

    /// Throws, naming the file and its owner, when `name` in `folder`
    /// exists and is not trusted. A missing name passes.
    static func require(_ names: [String], in folder: FolderHandle, directory: String) throws {
        for name in names {
            var st = stat()
            guard fstatat(folder.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            try require(owner: st.st_uid, links: UInt(st.st_nlink), name: name, in: folder, directory: directory)
        }
    }

    /// The same for a file already open (`fd`).
    static func require(opened fd: Int32, name: String, in folder: FolderHandle, directory: String) throws {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ImgWarmError.cache(path: directory + "/" + name, reason: "cannot read: \(errnoString(errno))", errno: errno) }
        try require(owner: st.st_uid, links: UInt(st.st_nlink), name: name, in: folder, directory: directory)
    }

    /// Whether an index file with `links` names is refused in a folder of
    /// `folderMode`: in a folder others may write (group or world), one
    /// with a second name. A neighbour who may write the folder can add a
    /// name there for a file of this user elsewhere (a hard link: a
    /// world-writable file under `fs.protected_hardlinks=1`, any file
    /// without it); the journal appends and SQLite's writes would then
    /// land in that file, outside the cache. The libraries never link an
    /// index file.
    static func refusesLinks(links: UInt, folderMode: UInt32) -> Bool {
        links > 1 && folderMode & UInt32(S_IWOTH | S_IWGRP) != 0
    }

    private static func require(owner: uid_t, links: UInt, name: String, in folder: FolderHandle, directory: String) throws {
        let me = geteuid()
        if owner == me && links <= 1 { return }
        var folderStat = stat()
        guard fstat(folder.fd, &folderStat) == 0 else {
            throw ImgWarmError.cache(path: directory, reason: "cannot read the folder's owner and mode: \(errnoString(errno))", errno: errno)
        }
        let mode = UInt32(folderStat.st_mode)
        if refusesLinks(links: links, folderMode: mode) {
            throw ImgWarmError.cache(path: directory + "/" + name,
                             reason: "has \(links) names (a hard link; its other name may be a file outside the cache) "
                                + "in a folder other users may write (mode \(FolderHandle.octal(mode & 0o7777))); "
                                + "imgwarm does not act on such an index (nothing read, nothing deleted; remove it)",
                             errno: EPERM)
        }
        if owner == me { return }
        // The group database is read only when the answer depends on it.
        let needsGroup = mode & UInt32(S_IWOTH) == 0 && mode & UInt32(S_IWGRP) != 0 && mode & UInt32(S_ISGID) != 0
        let member = needsGroup && isMember(owner, of: folderStat.st_gid)
        if !trusts(owner: owner, runningUser: me, folderMode: mode, ownerInFolderGroup: member) {
            throw ImgWarmError.cache(path: directory + "/" + name,
                             reason: untrustedReason(owner: owner, runningUser: me, folderMode: mode, folderGroup: folderStat.st_gid),
                             errno: EPERM)
        }
    }

    static func untrustedReason(owner: uid_t, runningUser: uid_t, folderMode: UInt32, folderGroup: gid_t) -> String {
        let mode = FolderHandle.octal(folderMode & 0o7777)
        let place = folderMode & UInt32(S_IWOTH) != 0 ? "in a folder every user may write (mode \(mode))"
            : folderMode & UInt32(S_ISGID) == 0 ? "in a group-writable folder that is no setgid team folder (mode \(mode))"
            : "in a setgid team folder (mode \(mode)) whose group \(folderGroup) uid \(owner) is not a member of"
        return "owned by uid \(owner), not by this user (uid \(runningUser)), \(place); "
            + "imgwarm does not act on an index another user may have planted (nothing read, nothing deleted; remove it, or run as its owner)"
    }
}
