//! Which addresses `web_extract` may connect to.
//!
//! Loopback and private (RFC 1918, CGNAT, IPv6 unique- and site-local)
//! addresses are refused unless the profile allows them
//! ([`ALLOW_PRIVATE_SETTING`] or `security.allow_private_urls`). Some are
//! refused even then: link-local
//! addresses (169.254.0.0/16, fe80::/10: where cloud metadata endpoints and
//! their credentials live, and never a page an agent needs), other cloud
//! metadata endpoints, unspecified, multicast, broadcast, documentation and
//! reserved ranges. IPv4 addresses embedded in IPv6 ones (mapped,
//! compatible, NAT64, 6to4) are judged as the IPv4 address they carry, so
//! `::ffff:169.254.169.254` is link-local too. Hosts on the profile's
//! `security.website_blocklist` are refused by name ([`Access`]).
//!
//! A refusal is a [`PolicyError`], whose `Display` is the model's text;
//! `fetch.rs` carries it in a `FetchError` and `tool.rs` turns it into the
//! page's `error` string.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use hermes_runtime::Profile;

/// The profile setting (in its `.env`) that lets `web_extract` reach
/// loopback and private addresses: `1`, `true`, `yes` or `on`. It wins over
/// `security.allow_private_urls` in the profile's `config.yaml`.
pub const ALLOW_PRIVATE_SETTING: &str = hermes_runtime::config::env::ALLOW_PRIVATE_URLS;

/// The largest blocklist file (`security.website_blocklist.shared_files`) read.
const MAX_BLOCKLIST_FILE_BYTES: u64 = 1 << 20;

/// Host names refused whatever they resolve to.
const BLOCKED_HOSTS: &[&str] = &["metadata.google.internal", "metadata.goog"];

/// Why the policy refuses a host. `Display` gives a message meant for the
/// model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The host resolves to a loopback or private address ([`Class::Restricted`])
    /// and the profile does not allow those.
    #[error(
        "Blocked: {host} resolves to {ip}, a {kind} address. Private and loopback \
         addresses are refused unless the profile allows them ({ALLOW_PRIVATE_SETTING})."
    )]
    Restricted {
        host: String,
        ip: IpAddr,
        kind: &'static str,
    },
    /// The host resolves to an address never fetched ([`Class::Forbidden`]).
    #[error("Blocked: {host} resolves to {ip}, a {kind} address, which is never fetched.")]
    Forbidden {
        host: String,
        ip: IpAddr,
        kind: &'static str,
    },
    /// The host name is a cloud metadata endpoint.
    #[error("Blocked: {host} is a cloud metadata endpoint, which is never fetched.")]
    MetadataHost { host: String },
    /// The profile's `security.website_blocklist` names the host: `rule`,
    /// read `from` `config.yaml` or a shared file.
    #[error("Blocked: {host} is on the profile's website blocklist (rule `{rule}` from {from})")]
    Blocklisted {
        host: String,
        rule: String,
        from: String,
    },
}

/// What a profile lets the web tools reach, read once per call.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub allow_private: bool,
    /// Host rules of `security.website_blocklist`, each with where it came
    /// from; empty when the blocklist is off.
    pub blocklist: Vec<(String, String)>,
}

impl From<bool> for Access {
    fn from(allow_private: bool) -> Self {
        Access {
            allow_private,
            blocklist: Vec::new(),
        }
    }
}

impl Access {
    /// The profile's: private addresses and its website blocklist (the
    /// `domains` of its `config.yaml`, then the lines of its `shared_files`;
    /// a file that cannot be read adds nothing).
    pub fn for_profile(profile: &Profile) -> Self {
        let config = profile.config();
        let wb = &config.security.website_blocklist;
        let mut blocklist = Vec::new();
        if wb.enabled.value {
            for rule in &wb.domains.value {
                if let Some(rule) = normalize_rule(rule) {
                    blocklist.push((rule, "config.yaml".to_string()));
                }
            }
            for file in &wb.shared_files.value {
                let Ok(f) = std::fs::File::open(file) else {
                    continue;
                };
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(
                    &mut std::io::Read::take(f, MAX_BLOCKLIST_FILE_BYTES),
                    &mut text,
                );
                for line in text.lines() {
                    if let Some(rule) = normalize_rule(line) {
                        blocklist.push((rule, file.display().to_string()));
                    }
                }
            }
        }
        Access {
            allow_private: config.security.allow_private_urls.value,
            blocklist,
        }
    }

    /// Refuses a host the blocklist names: `example.com` blocks it and its
    /// subdomains, `*.example.com` only its subdomains.
    pub fn check_blocklist(&self, host: &str) -> Result<(), PolicyError> {
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        let hit = self
            .blocklist
            .iter()
            .find(|(rule, _)| match rule.strip_prefix("*.") {
                Some(parent) => host.ends_with(&format!(".{parent}")),
                None => host == *rule || host.ends_with(&format!(".{rule}")),
            });
        match hit {
            Some((rule, from)) => Err(PolicyError::Blocklisted {
                host,
                rule: rule.clone(),
                from: from.clone(),
            }),
            None => Ok(()),
        }
    }
}

/// A blocklist rule as a bare lower-case host: scheme, path and a leading
/// `www.` dropped; comments and blank lines are none.
fn normalize_rule(rule: &str) -> Option<String> {
    let rule = rule.trim().to_ascii_lowercase();
    if rule.is_empty() || rule.starts_with('#') {
        return None;
    }
    let rule = rule
        .split_once("://")
        .map_or(rule.as_str(), |(_, rest)| rest);
    let host = rule
        .split('/')
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches('.');
    let host = host.strip_prefix("www.").unwrap_or(host);
    (!host.is_empty()).then(|| host.to_string())
}

/// What kind of address an IP is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Public,
    /// Refused unless the profile allows private addresses.
    Restricted(&'static str),
    /// Refused always.
    Forbidden(&'static str),
}

/// Classifies one address.
pub fn classify(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    let [a, b, c, d] = ip.octets();
    let metadata = [
        [169, 254, 169, 254],
        [169, 254, 170, 2],
        [169, 254, 169, 253],
        [100, 100, 100, 200],
    ];
    if metadata.contains(&[a, b, c, d]) {
        return Class::Forbidden("cloud metadata");
    }
    match (a, b, c) {
        (0, _, _) => Class::Forbidden("unspecified"),
        (127, _, _) => Class::Restricted("loopback"),
        (10, _, _) | (192, 168, _) => Class::Restricted("private"),
        (172, 16..=31, _) => Class::Restricted("private"),
        (100, 64..=127, _) => Class::Restricted("shared (CGNAT)"),
        (198, 18..=19, _) => Class::Restricted("private (benchmarking)"),
        (169, 254, _) => Class::Forbidden("link-local"),
        (192, 0, 0) => Class::Forbidden("reserved"),
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Class::Forbidden("documentation"),
        (224..=239, _, _) => Class::Forbidden("multicast"),
        (240..=255, _, _) => Class::Forbidden("reserved"),
        _ => Class::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> Class {
    if ip.is_unspecified() {
        return Class::Forbidden("unspecified");
    }
    if ip.is_loopback() {
        return Class::Restricted("loopback");
    }
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let s = ip.segments();
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Class::Forbidden("cloud metadata");
    }
    match s[0] {
        0xff00..=0xffff => Class::Forbidden("multicast"),
        0xfe80..=0xfebf => Class::Forbidden("link-local"),
        0xfec0..=0xfeff => Class::Restricted("private (site-local)"),
        0xfc00..=0xfdff => Class::Restricted("private (unique-local)"),
        0x2001 if s[1] == 0x0db8 => Class::Forbidden("documentation"),
        0x0100 if s[1..4] == [0, 0, 0] => Class::Forbidden("reserved (discard)"),
        0x0000 => Class::Forbidden("reserved"),
        _ => Class::Public,
    }
}

/// The IPv4 address an IPv6 address carries: mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0) {
        return Some(tail());
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail());
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

/// `Ok` when `ip` may be fetched; else why not.
pub fn check_ip(host: &str, ip: IpAddr, allow_private: bool) -> Result<(), PolicyError> {
    match classify(ip) {
        Class::Public => Ok(()),
        Class::Restricted(_) if allow_private => Ok(()),
        Class::Restricted(kind) => Err(PolicyError::Restricted {
            host: host.to_owned(),
            ip,
            kind,
        }),
        Class::Forbidden(kind) => Err(PolicyError::Forbidden {
            host: host.to_owned(),
            ip,
            kind,
        }),
    }
}

/// `Ok` when every address `host` resolved to may be fetched: one refused
/// address refuses the host, so it cannot pass with one address and be
/// reached on another.
pub fn check_all(
    host: &str,
    addrs: &[std::net::SocketAddr],
    allow_private: bool,
) -> Result<(), PolicyError> {
    addrs
        .iter()
        .try_for_each(|a| check_ip(host, a.ip(), allow_private))
}

/// `Ok` unless the host name itself is refused.
pub fn check_host(host: &str) -> Result<(), PolicyError> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if BLOCKED_HOSTS.contains(&host.as_str()) {
        return Err(PolicyError::MetadataHost { host });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Class {
        classify(s.parse().unwrap_or_else(|e| panic!("{s}: {e}")))
    }

    #[test]
    fn classifies_the_ranges() {
        let table = [
            ("93.184.216.34", Class::Public),
            ("2606:4700::1111", Class::Public),
            ("127.0.0.1", Class::Restricted("loopback")),
            ("127.8.9.10", Class::Restricted("loopback")),
            ("::1", Class::Restricted("loopback")),
            ("10.1.2.3", Class::Restricted("private")),
            ("172.16.0.1", Class::Restricted("private")),
            ("172.31.255.255", Class::Restricted("private")),
            ("172.32.0.1", Class::Public),
            ("192.168.1.1", Class::Restricted("private")),
            ("100.64.0.1", Class::Restricted("shared (CGNAT)")),
            ("169.254.1.1", Class::Forbidden("link-local")),
            ("169.254.0.0", Class::Forbidden("link-local")),
            ("169.254.255.255", Class::Forbidden("link-local")),
            ("169.253.255.255", Class::Public),
            ("169.255.0.1", Class::Public),
            ("fe80::1", Class::Forbidden("link-local")),
            ("febf:ffff::1", Class::Forbidden("link-local")),
            ("fec0::1", Class::Restricted("private (site-local)")),
            ("fd12:3456::1", Class::Restricted("private (unique-local)")),
            ("169.254.169.254", Class::Forbidden("cloud metadata")),
            ("fd00:ec2::254", Class::Forbidden("cloud metadata")),
            ("0.0.0.0", Class::Forbidden("unspecified")),
            ("::", Class::Forbidden("unspecified")),
            ("224.0.0.1", Class::Forbidden("multicast")),
            ("ff02::1", Class::Forbidden("multicast")),
            ("255.255.255.255", Class::Forbidden("reserved")),
            ("2001:db8::1", Class::Forbidden("documentation")),
            // IPv4 carried in IPv6 is judged as the IPv4 address.
            ("::ffff:127.0.0.1", Class::Restricted("loopback")),
            ("::ffff:169.254.169.254", Class::Forbidden("cloud metadata")),
            ("::ffff:169.254.1.1", Class::Forbidden("link-local")),
            ("::169.254.1.1", Class::Forbidden("link-local")),
            ("64:ff9b::169.254.1.1", Class::Forbidden("link-local")),
            ("2002:a9fe:101::", Class::Forbidden("link-local")),
            ("::10.0.0.1", Class::Restricted("private")),
            ("64:ff9b::192.168.0.1", Class::Restricted("private")),
            ("2002:7f00:1::", Class::Restricted("loopback")),
            ("::ffff:8.8.8.8", Class::Public),
        ];
        for (ip, want) in table {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn the_allowance_opens_restricted_ranges_only() {
        let lo: IpAddr = [127, 0, 0, 1].into();
        assert!(check_ip("localhost", lo, false).is_err());
        assert!(check_ip("localhost", lo, true).is_ok());
        let md: IpAddr = [169, 254, 169, 254].into();
        assert!(check_ip("x", md, true).is_err());
        for ip in ["169.254.1.1", "fe80::1", "::ffff:169.254.1.1"] {
            let ip: IpAddr = ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}"));
            let err = check_ip("x", ip, true).unwrap_err();
            assert!(
                matches!(
                    err,
                    PolicyError::Forbidden {
                        kind: "link-local",
                        ..
                    }
                ),
                "{err}"
            );
            let text = err.to_string();
            assert!(
                text.contains("link-local") && text.contains("never"),
                "{text}"
            );
        }
        assert!(check_host("metadata.google.internal.").is_err());
        let mixed: Vec<std::net::SocketAddr> = vec![
            "93.184.216.34:80".parse().unwrap_or_else(|e| panic!("{e}")),
            "10.0.0.7:80".parse().unwrap_or_else(|e| panic!("{e}")),
        ];
        let err = check_all("rebind.example", &mixed, false).unwrap_err();
        assert!(err.to_string().contains("10.0.0.7"), "{err}");
        assert!(check_all("rebind.example", &mixed[..1], false).is_ok());
        assert!(check_host("example.com").is_ok());
    }

    /// The refusals' words, which the model reads, exactly.
    #[test]
    fn refusals_say_what_they_said() {
        let private: IpAddr = [10, 0, 0, 7].into();
        assert_eq!(
            check_ip("h.example", private, false)
                .unwrap_err()
                .to_string(),
            "Blocked: h.example resolves to 10.0.0.7, a private address. Private and \
             loopback addresses are refused unless the profile allows them \
             (HERMES_ALLOW_PRIVATE_URLS)."
        );
        let md: IpAddr = [169, 254, 169, 254].into();
        assert_eq!(
            check_ip("h.example", md, true).unwrap_err().to_string(),
            "Blocked: h.example resolves to 169.254.169.254, a cloud metadata address, \
             which is never fetched."
        );
        assert_eq!(
            check_host("Metadata.Goog.").unwrap_err().to_string(),
            "Blocked: metadata.goog is a cloud metadata endpoint, which is never fetched."
        );
        let access = Access {
            allow_private: false,
            blocklist: vec![("example.com".to_string(), "config.yaml".to_string())],
        };
        assert_eq!(
            access
                .check_blocklist("WWW.Example.com.")
                .unwrap_err()
                .to_string(),
            "Blocked: www.example.com is on the profile's website blocklist \
             (rule `example.com` from config.yaml)"
        );
    }
}
