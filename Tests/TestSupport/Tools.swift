import Foundation

/// Runs a helper program (mount, openssl, ...) and returns its status and
/// output; nil when it cannot be started.
@discardableResult
public func runTool(_ path: String, _ args: [String]) -> (status: Int32, output: String)? {
    guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The first of `names` found on the usual PATH directories.
public func findTool(_ names: String...) -> String? {
    let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        + ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for name in names {
        for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
    }
    return nil
}

/// The lowercase hex digest of `text`'s UTF-8 bytes by a coreutils tool
/// (`sha256sum`, `sha1sum`, `md5sum`): an implementation independent of the
/// one imgwarm uses, for checking cache file names. Fed through a file, so
/// no shell quoting is involved. Nil when the tool cannot be run.
public func coreutilsDigest(_ tool: String, of text: String) -> String? {
    guard let path = findTool(tool) else { return nil }
    let file = NSTemporaryDirectory() + "imgwarm-digest-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
    guard FileManager.default.createFile(atPath: file, contents: Data(text.utf8)) else { return nil }
    defer { try? FileManager.default.removeItem(atPath: file) }
    guard let result = runTool(path, [file]), result.status == 0 else { return nil }
    return String(result.output.prefix { $0 != " " })
}
