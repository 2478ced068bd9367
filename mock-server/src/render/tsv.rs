//! The TSV download of one account statement: a header row, then one transaction per row.

use crate::data::Account;

/// The header row.
pub const COLUMNS: [&str; 10] = [
    "transactionId",
    "bookingDate",
    "valueDate",
    "amount",
    "currencyCode",
    "balanceAfter",
    "counterpartyName",
    "description",
    "category",
    "subcategory",
];

/// `-1234.56`: minor units as a plain decimal (dot separator, no grouping).
pub fn plain_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    format!("{sign}{}.{:02}", cents / 100, cents % 100)
}

/// The statement as TSV.
pub fn statement(account: &Account) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(b'\t')
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(Vec::new());
    writer.write_record(COLUMNS)?;
    for transaction in &account.transactions {
        writer.write_record([
            transaction.id.to_string(),
            transaction.booking.to_string(),
            transaction.value.to_string(),
            plain_cents(transaction.cents),
            account.currency.to_owned(),
            plain_cents(transaction.balance_after),
            transaction.counterparty.clone(),
            transaction.description.clone(),
            transaction.category.to_owned(),
            transaction.subcategory.to_owned(),
        ])?;
    }
    writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_cents_has_two_decimals() {
        assert_eq!(plain_cents(-123_456), "-1234.56");
        assert_eq!(plain_cents(5), "0.05");
    }
}
