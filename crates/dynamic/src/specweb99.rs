//! SPECweb99's dynamic workload as pure functions over bytes (reference
//! specweb99.md §2.3–2.6): the two tables Reset writes (`User.Personality`,
//! `Custom.Ads`), the ad a custom-ad GET chooses, the substitution of every
//! `<!WEB99CAD>` tag, the cookies, the POST log's header and 139-byte records,
//! and the page envelope. No I/O, no clock: callers pass the time and own the
//! files and the lock, so the built-in target, the CGI programs and the
//! FastCGI responder share one implementation.

use std::fmt::Write as _;

/// Ads in `Custom.Ads` (`MAX_AD`); ad ids wrap modulo this.
pub const ADS: u32 = 360;
/// Every this many ads one is easy to match, so a search ends within it (`CAD_SEARCH_INTERVAL`).
pub const SEARCH_INTERVAL: u32 = 24;
/// The minimum match weight of an ordinary ad (`MAX_CAD_WEIGHT`).
pub const MAX_CAD_WEIGHT: u32 = 75;
/// A user id is `USER_ID_BASE + index`.
pub const USER_ID_BASE: i64 = 10_000;
/// Bytes of one `User.Personality` record: `"%5d %8X\n"`.
pub const USER_RECORD_BYTES: usize = 15;
/// Bytes of one `Custom.Ads` record: `"%5d %8X %8X %3d %10d\n"`.
pub const AD_RECORD_BYTES: usize = 39;
/// Bytes of one POST log record.
pub const POST_RECORD_BYTES: usize = 139;
/// Bytes of the POST log's header line: the record count as `%10d\n`.
pub const POST_HEADER_BYTES: usize = 11;
/// How far in the past the two blocks of expired ads expire (366 days).
pub const EXPIRED_AGO_S: i64 = 31_622_400;

const GENDER: u32 = 0x3000_0000;
const AGE: u32 = 0x0F00_0000;
const REGION: u32 = 0x00F0_0000;
const INTEREST1: u32 = 0x000F_FC00;
const INTEREST2: u32 = 0x0000_03FF;
/// Interest-2 bits by index. The two kit ports swap indexes 4 and 5 between the user and the ad
/// generator (reference §2.4, a quirk of the original code); crest uses this one order for both,
/// so a user's interest always has an ad that shares it.
const INTEREST2_BITS: [u32; 10] = [0x200, 0x100, 0x80, 0x40, 0x20, 0x10, 0x8, 0x4, 0x2, 0x1];
const CAD_PREFIX: &[u8] = b"<!WEB99CAD><IMG SRC=\"/file_set/dir";

/// The seed of record `j` of either table: `((j mod 360) × 10000) mod 12301`, 0 read as 12300.
fn seed(j: u32) -> u32 {
    match ((j % ADS) * 10_000) % 12_301 {
        0 => 12_300,
        k => k,
    }
}

/// The demographics word of record `j` (a user, or an ad before the easy ads' extra bits).
pub fn demographics(j: u32) -> u32 {
    let k = seed(j);
    let (c2, c3, c4) = ((k >> 8) & 0xF, (k >> 4) & 0xF, k & 0xF);
    let gender = if k % 2 == 1 { 0x2000_0000 } else { 0x1000_0000 };
    let age = 0x0800_0000 >> (k % 4);
    let region = 0x0080_0000 >> ((c4 + c2) % 4);
    let interest1 = 0x0008_0000 >> ((c4 + c3) % 10);
    let interest2 = INTEREST2_BITS[(c4 % 10) as usize];
    gender | age | region | interest1 | interest2
}

/// One ad of `Custom.Ads`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ad {
    /// Its id, 0..360.
    pub id: u32,
    /// Demographics it targets.
    pub demographics: u32,
    /// One nibble per category: gender 16–19, age 12–15, region 8–11, interest-1 4–7, interest-2 0–3.
    pub weights: u32,
    /// The least weight that selects it.
    pub minmatch: u32,
    /// Unix seconds from which it is expired.
    pub expires_unix_s: i64,
}

/// What Reset was asked (`command/Reset&maxload=…&pttime=…&maxthread=…&exp=a,b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset {
    /// Users in `User.Personality`.
    pub maxload: u32,
    /// Seconds a run lasts; ads expire two of these after the reset.
    pub pttime: u32,
    /// Client threads; where the easy ads start.
    pub maxthread: u32,
    /// The first ads of the two blocks of expired ads.
    pub expired: (u32, u32),
}

/// The ads Reset writes at `now_unix_s`.
pub fn ads(reset: &Reset, now_unix_s: i64) -> Vec<Ad> {
    let easy_from = reset.maxthread % SEARCH_INTERVAL;
    let expired = |id: u32| {
        [reset.expired.0, reset.expired.1].iter().any(|&start| (id + ADS - start % ADS) % ADS < SEARCH_INTERVAL)
    };
    (0..ADS)
        .map(|id| {
            let k = seed(id);
            let mut ad = Ad {
                id,
                demographics: demographics(id),
                weights: match (k * k) % 1_048_576 {
                    0 => 0x27104,
                    w => w,
                },
                minmatch: MAX_CAD_WEIGHT,
                expires_unix_s: now_unix_s + 2 * i64::from(reset.pttime),
            };
            if id % SEARCH_INTERVAL == easy_from {
                ad.minmatch = 1;
                ad.weights = 0x3FFFF;
                ad.demographics |= INTEREST2;
            }
            if expired(id) {
                ad.expires_unix_s = now_unix_s - EXPIRED_AGO_S;
            }
            ad
        })
        .collect()
}

/// `User.Personality` as Reset writes it: `maxload` records of `"%5d %8X\n"`.
pub fn user_personality(maxload: u32) -> String {
    let mut out = String::with_capacity(maxload as usize * USER_RECORD_BYTES);
    for j in 0..maxload {
        let _ = writeln!(out, "{j:5} {:8X}", demographics(j));
    }
    out
}

/// `Custom.Ads` as Reset writes it: one `"%5d %8X %8X %3d %10d\n"` record per ad.
pub fn custom_ads(ads: &[Ad]) -> String {
    let mut out = String::with_capacity(ads.len() * AD_RECORD_BYTES);
    for ad in ads {
        let _ = writeln!(
            out,
            "{:5} {:8X} {:8X} {:3} {:10}",
            ad.id, ad.demographics, ad.weights, ad.minmatch, ad.expires_unix_s
        );
    }
    out
}

/// A user's demographics from `User.Personality` text (None: no such user).
pub fn user_demographics(table: &[u8], index: u32) -> Option<u32> {
    let start = index as usize * USER_RECORD_BYTES;
    let record = table.get(start..start + USER_RECORD_BYTES)?;
    let text = std::str::from_utf8(record).ok()?;
    let mut fields = text.split_whitespace();
    (fields.next()?.parse::<u32>().ok()? == index).then_some(())?;
    u32::from_str_radix(fields.next()?, 16).ok()
}

/// The ads of `Custom.Ads` text (None: a malformed record).
pub fn parse_ads(table: &[u8]) -> Option<Vec<Ad>> {
    let text = std::str::from_utf8(table).ok()?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut f = line.split_whitespace();
            Some(Ad {
                id: f.next()?.parse().ok()?,
                demographics: u32::from_str_radix(f.next()?, 16).ok()?,
                weights: u32::from_str_radix(f.next()?, 16).ok()?,
                minmatch: f.next()?.parse().ok()?,
                expires_unix_s: f.next()?.parse().ok()?,
            })
        })
        .collect()
}

/// The weight of `ad` for a user: the ad's weight of every category the two share a bit in.
pub fn match_weight(user_demographics: u32, ad: &Ad) -> u32 {
    let combined = user_demographics & ad.demographics;
    [(GENDER, 16), (AGE, 12), (REGION, 8), (INTEREST1, 4), (INTEREST2, 0)]
        .iter()
        .filter(|(mask, _)| combined & mask != 0)
        .map(|(_, shift)| (ad.weights >> shift) & 0xF)
        .sum()
}

/// The ad a custom-ad GET answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The ad, or -1 when the user is unknown or nothing matched.
    pub ad: i64,
    /// Its match weight.
    pub weight: u32,
    /// Whether it has expired.
    pub expired: bool,
}

impl Choice {
    /// The error form: no ad.
    pub const NONE: Choice = Choice { ad: -1, weight: 0, expired: true };

    /// The file an ad names: `dir = ad/36`, `class = (ad % 36)/9`, `file = ad % 9`.
    pub fn path(self) -> Option<(u32, u32, u32)> {
        let ad = u32::try_from(self.ad).ok()?;
        Some((ad / 36, (ad % 36) / 9, ad % 9))
    }

    /// The Set-Cookie value: `found_cookie=Ad_id=<ad>&Ad_weight=<w>&Expired=<0|1>`.
    pub fn cookie(self) -> String {
        format!("found_cookie=Ad_id={}&Ad_weight={}&Expired={}", self.ad, self.weight, u8::from(self.expired))
    }
}

/// The ad for a user with `user_demographics` who last saw `last_ad`: the first from `last_ad + 1` on
/// (wrapping, `last_ad` itself last) whose weight reaches its minmatch. Expired once `now` reaches its time.
pub fn choose_ad(user_demographics: u32, last_ad: u32, ads: &[Ad], now_unix_s: i64) -> Choice {
    if ads.is_empty() {
        return Choice::NONE;
    }
    let n = ads.len();
    (1..=n)
        .map(|step| &ads[(last_ad as usize + step) % n])
        .find_map(|ad| {
            let weight = match_weight(user_demographics, ad);
            (weight >= ad.minmatch).then_some(Choice {
                ad: i64::from(ad.id),
                weight,
                expired: now_unix_s >= ad.expires_unix_s,
            })
        })
        .unwrap_or(Choice::NONE)
}

/// A request's `my_cookie=user_id=<id>&last_ad=<n>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MyCookie {
    /// `USER_ID_BASE + user index`.
    pub user_id: i64,
    /// The ad the user saw last.
    pub last_ad: u32,
}

impl MyCookie {
    /// The user's index in `User.Personality`, when the id is in range.
    pub fn user_index(self) -> Option<u32> {
        u32::try_from(self.user_id - USER_ID_BASE).ok()
    }
}

/// `my_cookie` out of a Cookie header value (other cookies around it are ignored).
pub fn parse_my_cookie(header: &str) -> Option<MyCookie> {
    let value = header.split(';').map(str::trim).find_map(|c| c.strip_prefix("my_cookie="))?;
    let (mut user_id, mut last_ad): (Option<i64>, Option<u32>) = (None, None);
    for pair in value.split('&') {
        match pair.split_once('=') {
            Some(("user_id", v)) => user_id = v.trim().parse().ok(),
            Some(("last_ad", v)) => last_ad = v.trim().parse().ok(),
            _ => {}
        }
    }
    Some(MyCookie { user_id: user_id?, last_ad: last_ad? % ADS })
}

/// Rewrite every custom-ad tag of a class 1 or 2 file in place to name `(dir, class, file)`; the length
/// is unchanged. Returns how many tags were rewritten.
pub fn substitute_ads(body: &mut [u8], (dir, class, file): (u32, u32, u32)) -> usize {
    let digits = format!("{dir:05}");
    let mut count = 0;
    let mut at = 0;
    while let Some(found) = find(&body[at..], CAD_PREFIX) {
        let tag = at + found;
        // dirNNNNN/classX_Y: the directory at 34..39, the class at 45, the file at 47 of the tag.
        if tag + 48 > body.len() {
            break;
        }
        body[tag + 34..tag + 39].copy_from_slice(digits.as_bytes());
        body[tag + 45] = b'0' + (class % 10) as u8;
        body[tag + 47] = b'0' + (file % 10) as u8;
        count += 1;
        at = tag + CAD_PREFIX.len();
    }
    count
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A POST's form fields (`class=1&client=2&dir=00004&num=3&urlroot=/file_set/`, any order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostForm {
    /// Directory number.
    pub dir: u32,
    /// Class 0..3.
    pub class: u32,
    /// File 0..8.
    pub num: u32,
    /// The client that sent it.
    pub client: u32,
    /// The path prefix up to and including `file_set/`.
    pub urlroot: String,
}

impl PostForm {
    /// `urlroot + "dir" + dir + "/class" + class + "_" + num`.
    pub fn filename(&self) -> String {
        format!("{}dir{:05}/class{}_{}", self.urlroot, self.dir, self.class, self.num)
    }
}

/// Parse a POST body: exactly the five fields, each once, in range (None otherwise: a 400).
pub fn parse_post(body: &str) -> Option<PostForm> {
    let (mut dir, mut class, mut num, mut client, mut urlroot) = (None, None, None, None, None);
    let mut fields = 0;
    for pair in body.trim().split('&') {
        let (key, value) = pair.split_once('=')?;
        let slot = match key {
            "dir" => &mut dir,
            "class" => &mut class,
            "num" => &mut num,
            "client" => &mut client,
            "urlroot" => {
                urlroot.replace(value.to_string()).map_or(Some(()), |_| None)?;
                fields += 1;
                continue;
            }
            _ => return None,
        };
        slot.replace(value.parse::<u32>().ok()?).map_or(Some(()), |_| None)?;
        fields += 1;
    }
    let form = PostForm { dir: dir?, class: class?, num: num?, client: client?, urlroot: urlroot? };
    (fields == 5 && form.class <= 3 && form.num <= 8).then_some(form)
}

/// The POST log's first line for `records` records: `"%10d\n"`.
pub fn post_header(records: u64) -> String {
    format!("{records:10}\n")
}

/// One 139-byte POST log record:
/// `"%10d %10d %10d %5d %2d %2d %10d %-60.60s %10d %10d\n"` = record number (from 1), Unix time,
/// pid/tid, dir, class, num, client, filename (cut at 60), the same pid/tid, user id.
pub fn post_record(recno: u64, time_unix_s: i64, pid: u32, form: &PostForm, user_id: i64) -> String {
    let name: String = form.filename().chars().take(60).collect();
    format!(
        "{recno:10} {time_unix_s:10} {pid:10} {:5} {:2} {:2} {:10} {name:<60} {pid:10} {user_id:10}\n",
        form.dir, form.class, form.num, form.client
    )
}

/// The page every dynamic answer is wrapped in (§2.3), with `content` unmodified inside `<pre>`.
pub fn envelope(server: &str, remote_addr: &str, script: &str, query: &str, content: &[u8]) -> Vec<u8> {
    let head = format!(
        "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n\
         <p>SERVER_SOFTWARE = {server}\n<p>REMOTE_ADDR = {remote_addr}\n<p>SCRIPT_NAME = {script}\n\
         <p>QUERY_STRING = {query}\n<pre>\n"
    );
    let mut out = Vec::with_capacity(head.len() + content.len() + 24);
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(content);
    out.extend_from_slice(b"\n</pre>\n</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reset() -> Reset {
        Reset { maxload: 100, pttime: 100, maxthread: 100, expired: (1, 100) }
    }

    #[test]
    fn a_users_demographics_follow_the_generator_by_hand() {
        // j = 1: k = 10000 mod 12301 = 10000 = 0x2710; c2 = 7, c3 = 1, c4 = 0.
        // even → 0x10000000; k mod 4 = 0 → 0x08000000; (0+7) mod 4 = 3 → 0x00100000;
        // (0+1) mod 10 = 1 → 0x00040000; 0 mod 10 = 0 → 0x200.
        assert_eq!(demographics(1), 0x1000_0000 | 0x0800_0000 | 0x0010_0000 | 0x0004_0000 | 0x200);
        // j = 0: k = 0 → 12300 = 0x300C; c2 = 0, c3 = 0, c4 = 12.
        // even → 0x10000000; 12300 mod 4 = 0 → 0x08000000; 12 mod 4 = 0 → 0x00800000;
        // 12 mod 10 = 2 → 0x00020000; 12 mod 10 = 2 → 0x80.
        assert_eq!(demographics(0), 0x1000_0000 | 0x0800_0000 | 0x0080_0000 | 0x0002_0000 | 0x80);
        assert_eq!(demographics(361), demographics(1)); // mod 360
    }

    #[test]
    fn tables_have_the_kits_record_sizes() {
        let users = user_personality(3);
        assert_eq!(users.len(), 3 * USER_RECORD_BYTES);
        assert_eq!(&users[..USER_RECORD_BYTES], format!("    0 {:8X}\n", demographics(0)));
        let table = custom_ads(&ads(&reset(), 1_000_000_000));
        assert_eq!(table.len(), ADS as usize * AD_RECORD_BYTES);
        assert_eq!(parse_ads(table.as_bytes()).unwrap(), ads(&reset(), 1_000_000_000));
        assert_eq!(user_demographics(users.as_bytes(), 2), Some(demographics(2)));
        assert_eq!(user_demographics(users.as_bytes(), 3), None);
    }

    #[test]
    fn reset_is_deterministic_and_marks_easy_and_expired_ads() {
        let now = 1_000_000_000;
        assert_eq!(custom_ads(&ads(&reset(), now)), custom_ads(&ads(&reset(), now)));
        let all = ads(&reset(), now);
        // maxthread 100 → easy ads at 4, 28, 52, …
        assert_eq!(all.iter().filter(|a| a.minmatch == 1).map(|a| a.id).take(3).collect::<Vec<_>>(), [4, 28, 52]);
        assert!(all
            .iter()
            .filter(|a| a.minmatch == 1)
            .all(|a| a.weights == 0x3FFFF && a.demographics & 0x3FF == 0x3FF));
        // Two blocks of 24 from 1 and from 100 expired a year ago; the rest in 2 × pttime.
        let expired: Vec<u32> = all.iter().filter(|a| a.expires_unix_s < now).map(|a| a.id).collect();
        assert_eq!(expired, (1..25).chain(100..124).collect::<Vec<_>>());
        assert!(all.iter().filter(|a| a.expires_unix_s >= now).all(|a| a.expires_unix_s == now + 200));
        // ad 1: k = 10000, weights = 10000² mod 2^20.
        assert_eq!(all[1].weights, (10_000 * 10_000) % 1_048_576);
    }

    #[test]
    fn the_search_takes_the_first_ad_after_last_ad_that_matches() {
        let now = 1_000_000_000;
        let all = ads(&reset(), now);
        let user = demographics(1);
        // From last_ad 20 the first easy ad is 28 (every user shares its interest-2 bits); 28 is not expired.
        let choice = choose_ad(user, 20, &all, now);
        let weight = match_weight(user, &all[28]);
        assert!(all[21..28].iter().all(|a| match_weight(user, a) < a.minmatch));
        assert_eq!(choice, Choice { ad: 28, weight, expired: false });
        assert_eq!(choice.path(), Some((0, 3, 1))); // 28/36 = 0, (28 % 36)/9 = 3, 28 % 9 = 1
        assert_eq!(choice.cookie(), format!("found_cookie=Ad_id=28&Ad_weight={weight}&Expired=0"));
        // From 0 the first easy ad is 4, in an expired block.
        assert!(choose_ad(user, 0, &all, now).expired);
        assert_eq!(choose_ad(user, 0, &[], now).cookie(), "found_cookie=Ad_id=-1&Ad_weight=0&Expired=1");
    }

    #[test]
    fn every_tag_is_rewritten_and_nothing_else() {
        let tag = b"<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class0_0\"><!/WEB99CAD>";
        let mut body = Vec::new();
        body.extend_from_slice(b"     1024 file_set/dir00004/class1_3\n");
        body.extend_from_slice(tag);
        body.extend_from_slice(b" \nfiller dir00000/class0_0 outside a tag\n");
        body.extend_from_slice(tag);
        let before = body.clone();
        assert_eq!(substitute_ads(&mut body, (7, 2, 5)), 2);
        assert_eq!(body.len(), before.len());
        let text = String::from_utf8(body).unwrap();
        assert_eq!(text.matches("<!WEB99CAD><IMG SRC=\"/file_set/dir00007/class2_5\"><!/WEB99CAD>").count(), 2);
        assert!(text.contains("filler dir00000/class0_0 outside a tag"));
    }

    #[test]
    fn cookies_parse_among_others() {
        let c = parse_my_cookie("a=b; my_cookie=user_id=10001&last_ad=20; x=y").unwrap();
        assert_eq!(c, MyCookie { user_id: 10_001, last_ad: 20 });
        assert_eq!(c.user_index(), Some(1));
        assert_eq!(parse_my_cookie("my_cookie=user_id=9999&last_ad=1").unwrap().user_index(), None);
        assert_eq!(parse_my_cookie("other=1"), None);
        assert_eq!(parse_my_cookie("my_cookie=user_id=10001"), None);
    }

    #[test]
    fn post_records_are_139_bytes_byte_for_byte() {
        let form = parse_post("class=1&client=2&dir=00004&num=3&urlroot=/file_set/").unwrap();
        assert_eq!(form.filename(), "/file_set/dir00004/class1_3");
        let record = post_record(1, 1_000_000_000, 4242, &form, 10_001);
        assert_eq!(record.len(), POST_RECORD_BYTES);
        let expected = format!(
            "{:>10} {:>10} {:>10} {:>5} {:>2} {:>2} {:>10} {:<60} {:>10} {:>10}\n",
            1, 1_000_000_000, 4242, 4, 1, 3, 2, "/file_set/dir00004/class1_3", 4242, 10_001
        );
        assert_eq!(record, expected);
        assert_eq!(post_header(0), "         0\n");
        assert_eq!(post_header(0).len(), POST_HEADER_BYTES);
        let long = PostForm { urlroot: "/".repeat(70), ..form };
        assert_eq!(post_record(2, 0, 1, &long, 10_001).len(), POST_RECORD_BYTES);
        // cut at 60
    }

    #[test]
    fn post_bodies_need_exactly_the_five_fields() {
        assert!(parse_post("urlroot=/file_set/&num=8&dir=00000&client=0&class=3").is_some());
        assert!(parse_post("class=1&client=2&dir=00004&num=3").is_none()); // missing
        assert!(parse_post("class=1&client=2&dir=00004&num=3&urlroot=/f/&x=1").is_none()); // unknown
        assert!(parse_post("class=1&class=1&client=2&dir=00004&num=3&urlroot=/f/").is_none()); // twice
        assert!(parse_post("class=4&client=2&dir=00004&num=3&urlroot=/f/").is_none());
        // out of range
    }

    #[test]
    fn the_envelope_holds_the_file_unmodified() {
        let page = envelope("crest", "127.0.0.1", "/specweb99", "/file_set/dir00000/class0_0", b"     102 x\n");
        let text = String::from_utf8(page).unwrap();
        assert!(text.starts_with("<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>"));
        assert!(text.contains("<p>QUERY_STRING = /file_set/dir00000/class0_0\n<pre>\n     102 x\n\n</pre>"));
    }
}
