//! UTC timestamps as RFC 3339 strings (`2026-11-29T11:00:00Z`), without a date library:
//! Howard Hinnant's `days_from_civil` / `civil_from_days`.

/// Seconds since the Unix epoch now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Formats Unix seconds as RFC 3339 UTC.
pub fn format(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Parses `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM:SSZ`.
pub fn parse(s: &str) -> Result<i64, String> {
    let bad = || format!("{s:?} is not a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDTHH:MM:SSZ)");
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').ok_or_else(bad)?)),
        None => (s, None),
    };
    let num = |p: &str, len: usize| -> Result<i64, String> {
        if p.len() != len || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        p.parse::<i64>().map_err(|_| bad())
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts[..] else {
        return Err(bad());
    };
    let (y, m, d) = (num(y, 4)?, num(m, 2)?, num(d, 2)?);
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
        || civil_from_days(days_from_civil(y, m, d)) != (y, m, d)
    {
        return Err(bad());
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    if let Some(t) = time {
        let parts: Vec<&str> = t.split(':').collect();
        let [h, mi, se] = parts[..] else {
            return Err(bad());
        };
        let (h, mi, se) = (num(h, 2)?, num(mi, 2)?, num(se, 2)?);
        if h > 23 || mi > 59 || se > 59 {
            return Err(bad());
        }
        secs += h * 3600 + mi * 60 + se;
    }
    Ok(secs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_and_known_values() {
        assert_eq!(super::format(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::parse("2000-03-01").unwrap(), 951_868_800);
        assert_eq!(super::format(951_868_800), "2000-03-01T00:00:00Z");
        for t in [0, 1_700_000_000, 4_102_444_799, 951_868_799] {
            assert_eq!(super::parse(&super::format(t)).unwrap(), t);
        }
        assert!(super::parse("2026-02-30").is_err());
        assert!(super::parse("2026-1-01").is_err());
        assert!(super::parse("2026-01-01T25:00:00Z").is_err());
    }
}
