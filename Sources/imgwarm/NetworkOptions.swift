import ArgumentParser
import Foundation
import ImgWarmKit

/// `warm`'s options that say how to reach the servers, named and read as
/// the curl tool names and reads them (docs/network.md).
struct NetworkOptions: ParsableArguments {
    @Option(name: .customLong("cacert"), help: ArgumentHelp("CA bundle (PEM) to verify servers with, instead of the system's. [default: $CURL_CA_BUNDLE, else $SSL_CERT_FILE, else libcurl's]", valueName: "file"))
    var cacert: String?

    @Option(name: .customLong("capath"), help: ArgumentHelp("Folder of CA certificates (c_rehash'ed) to verify servers with. [default: $SSL_CERT_DIR unless $CURL_CA_BUNDLE is set]", valueName: "dir"))
    var capath: String?

    @Option(name: [.customShort("x"), .customLong("proxy")], help: ArgumentHelp("Proxy for every request and redirect hop ([scheme://]host[:port]). [default: libcurl's variables: http_proxy, HTTPS_PROXY/https_proxy, ALL_PROXY/all_proxy]", valueName: "url"))
    var proxy: String?

    @Option(name: .customLong("noproxy"), help: ArgumentHelp("Hosts reached without the proxy (comma-separated; * for all). [default: $NO_PROXY/$no_proxy]", valueName: "list"))
    var noProxy: String?

    @Flag(name: .customLong("netrc"), help: "Take user name and password for each host from ~/.netrc (never printed or stored).")
    var netrc = false

    @Flag(name: .customLong("netrc-optional"), help: "As --netrc, but a missing ~/.netrc (or --netrc-file) is no error.")
    var netrcOptional = false

    @Option(name: .customLong("netrc-file"), help: ArgumentHelp("The .netrc file to read instead of ~/.netrc (implies --netrc).", valueName: "file"))
    var netrcFile: String?

    func validate() throws {
        for (flag, path, folder) in [("--cacert", cacert, false), ("--capath", capath, true)] {
            guard let path else { continue }
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue == folder,
                  FileManager.default.isReadableFile(atPath: path) else {
                throw ValidationError("\(flag) \(path): not a readable \(folder ? "folder" : "file")")
            }
        }
        if let netrcFile, !netrcOptional {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: netrcFile, isDirectory: &isDir), !isDir.boolValue,
                  FileManager.default.isReadableFile(atPath: netrcFile) else {
                throw ValidationError("--netrc-file \(netrcFile): not a readable file")
            }
        }
        if let proxy, proxy.isEmpty == false, proxy.contains(where: { $0.isWhitespace }) {
            throw ValidationError("--proxy takes one URL: [scheme://]host[:port]")
        }
    }

    func apply(to config: inout DownloaderConfiguration, environment: [String: String]) {
        let ca = CurlTransportOptions.certificateAuthorities(cacert: cacert, capath: capath, environment: environment)
        config.caFile = ca.file
        config.caPath = ca.path
        config.proxy = proxy
        config.noProxy = noProxy
        config.netrc = CurlTransportOptions.netrc(netrc: netrc, optional: netrcOptional, file: netrcFile)
        config.netrcFile = netrcFile
    }
}
