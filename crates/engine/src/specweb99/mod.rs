//! SPECweb99's client (reference specweb99.md §1.4–1.7, §2, §7): `mix`
//! draws what each request asks for, `request` writes it into a slot's own
//! buffer, `check` judges the response. Everything here is sans-IO and
//! allocation-free once built: the slot owns the state, the plan the tables.

pub mod check;
pub mod mix;
pub mod request;

use std::fmt;

pub use check::{ad_id, BodyCheck, Invalid};
pub use mix::{Mix, FILE_ORDER};
pub use request::{Cookie, Endpoint, Site};

/// File classes (0–3).
pub const CLASSES: usize = 4;

/// The number of ads in Custom.Ads; ad ids are `0..ADS`.
pub const ADS: u32 = 360;

/// Kinds of request, in the order of `Specweb99::request_mix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// GET of a static file.
    Static,
    /// Standard dynamic GET.
    Dynamic,
    /// Standard dynamic GET through CGI.
    Cgi,
    /// Dynamic GET with custom ad rotation.
    Cad,
    /// Dynamic POST.
    Post,
}

impl Op {
    /// All kinds, by index.
    pub const ALL: [Op; 5] = [Self::Static, Self::Dynamic, Self::Cgi, Self::Cad, Self::Post];

    /// The name in class names.
    pub fn name(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Dynamic => "dynamic",
            Self::Cgi => "cgi",
            Self::Cad => "cad",
            Self::Post => "post",
        }
    }
}

/// One file of the file set: `file_set/dir%05d/class%d_%d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    /// Directory index.
    pub dir: u32,
    /// Class, 0–3.
    pub class: u8,
    /// File within the class, 0–8.
    pub file: u8,
}

impl FileId {
    /// The file an ad names (§2.4 step 6).
    pub fn of_ad(ad: u32) -> Self {
        Self { dir: ad / 36, class: ((ad % 36) / 9) as u8, file: (ad % 9) as u8 }
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "file_set/dir{:05}/class{}_{}", self.dir, self.class, self.file)
    }
}

/// The class index of a request: op × 4 + file class.
pub fn class_index(op: Op, class: u8) -> usize {
    op as usize * CLASSES + usize::from(class)
}

/// The 20 class names, by class index.
pub fn class_names() -> Vec<String> {
    Op::ALL.iter().flat_map(|op| (0..CLASSES).map(move |c| format!("{}/class{c}", op.name()))).collect()
}

/// What a run with `specweb99` needs, built once in the plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The draws.
    pub mix: Mix,
    /// Where each kind of request goes, and how it is written.
    pub site: Site,
    /// Rows of User.Personality.
    pub users: u32,
    /// Global index of this engine's connection 0.
    pub first_connection: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ads() {
        let names = class_names();
        assert_eq!(names.len(), 20);
        assert_eq!(names[0], "static/class0");
        assert_eq!(names[class_index(Op::Cad, 2)], "cad/class2");
        assert_eq!(names[19], "post/class3");
        assert_eq!(FileId::of_ad(0).to_string(), "file_set/dir00000/class0_0");
        assert_eq!(FileId::of_ad(359).to_string(), "file_set/dir00009/class3_8");
        assert_eq!(FileId::of_ad(50).to_string(), "file_set/dir00001/class1_5");
    }
}
