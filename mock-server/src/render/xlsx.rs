//! Excel (xlsx) exports of account statements and their transactions.

use chrono::Datelike;
use rust_xlsxwriter::{DocProperties, ExcelDateTime, Format, Workbook, Worksheet, XlsxError};

use crate::data::Account;

const HEADER: [&str; 12] = [
    "Account (IBAN)",
    "Bank",
    "Booking date",
    "Value date",
    "Amount",
    "Currency",
    "Balance after",
    "Counterparty",
    "Description",
    "Category",
    "Subcategory",
    "Transaction id",
];

fn date(value: chrono::NaiveDate) -> Result<ExcelDateTime, XlsxError> {
    ExcelDateTime::from_ymd(
        u16::try_from(value.year()).unwrap_or(1900),
        value.month() as u8,
        value.day() as u8,
    )
}

fn write_transactions(
    sheet: &mut Worksheet,
    first_row: u32,
    accounts: &[&Account],
) -> Result<u32, XlsxError> {
    let bold = Format::new().set_bold();
    let money = Format::new().set_num_format("#,##0.00");
    let day = Format::new().set_num_format("yyyy-mm-dd");
    for (column, title) in HEADER.iter().enumerate() {
        sheet.write_string_with_format(first_row, column as u16, *title, &bold)?;
    }
    let mut row = first_row + 1;
    for account in accounts {
        for transaction in &account.transactions {
            sheet.write_string(row, 0, &account.iban)?;
            sheet.write_string(row, 1, &account.bank)?;
            sheet.write_datetime_with_format(row, 2, date(transaction.booking)?, &day)?;
            sheet.write_datetime_with_format(row, 3, date(transaction.value)?, &day)?;
            sheet.write_number_with_format(row, 4, transaction.cents as f64 / 100.0, &money)?;
            sheet.write_string(row, 5, account.currency)?;
            sheet.write_number_with_format(
                row,
                6,
                transaction.balance_after as f64 / 100.0,
                &money,
            )?;
            sheet.write_string(row, 7, &transaction.counterparty)?;
            sheet.write_string(row, 8, &transaction.description)?;
            sheet.write_string(row, 9, transaction.category)?;
            sheet.write_string(row, 10, transaction.subcategory)?;
            sheet.write_string(row, 11, transaction.id.to_string())?;
            row += 1;
        }
    }
    if row > first_row + 1 {
        sheet.autofilter(first_row, 0, row - 1, (HEADER.len() - 1) as u16)?;
    }
    sheet.set_freeze_panes(first_row + 1, 0)?;
    sheet.autofit();
    Ok(row)
}

/// A workbook with the transactions of all `accounts` on one sheet and one summary row per
/// account on a second.
pub fn transactions(accounts: &[&Account], title: &str) -> Result<Vec<u8>, XlsxError> {
    let mut workbook = Workbook::new();
    workbook.set_properties(
        &DocProperties::new()
            .set_title(title)
            .set_author("creditdata-mock"),
    );
    let sheet = workbook.add_worksheet();
    sheet.set_name("Transactions")?;
    write_transactions(sheet, 0, accounts)?;

    let sheet = workbook.add_worksheet();
    sheet.set_name("Accounts")?;
    let bold = Format::new().set_bold();
    let money = Format::new().set_num_format("#,##0.00");
    let day = Format::new().set_num_format("yyyy-mm-dd");
    let header = [
        "Account (IBAN)",
        "Bank",
        "Holder",
        "Currency",
        "Period start",
        "Period end",
        "Opening balance",
        "Closing balance",
        "Transactions",
    ];
    for (column, title) in header.iter().enumerate() {
        sheet.write_string_with_format(0, column as u16, *title, &bold)?;
    }
    for (index, account) in accounts.iter().enumerate() {
        let row = index as u32 + 1;
        sheet.write_string(row, 0, &account.iban)?;
        sheet.write_string(row, 1, &account.bank)?;
        sheet.write_string(row, 2, &account.holder)?;
        sheet.write_string(row, 3, account.currency)?;
        sheet.write_datetime_with_format(row, 4, date(account.period_start)?, &day)?;
        sheet.write_datetime_with_format(row, 5, date(account.period_end)?, &day)?;
        sheet.write_number_with_format(row, 6, account.opening.value(), &money)?;
        sheet.write_number_with_format(row, 7, account.closing().value(), &money)?;
        sheet.write_number(row, 8, account.transactions.len() as f64)?;
    }
    sheet.autofit();
    workbook.save_to_buffer()
}

/// A workbook for one statement: account facts on top, its transactions below.
pub fn statement(account: &Account) -> Result<Vec<u8>, XlsxError> {
    let mut workbook = Workbook::new();
    workbook.set_properties(
        &DocProperties::new()
            .set_title(format!("Account statement {}", account.iban))
            .set_author("creditdata-mock"),
    );
    let sheet = workbook.add_worksheet();
    sheet.set_name("Statement")?;
    let bold = Format::new().set_bold();
    let money = Format::new().set_num_format("#,##0.00");
    let day = Format::new().set_num_format("yyyy-mm-dd");
    let facts: [(&str, String); 5] = [
        ("Account (IBAN)", account.iban.clone()),
        ("Bank", account.bank.clone()),
        ("Holder", account.holder.clone()),
        ("Currency", account.currency.to_owned()),
        ("Account type", account.kind.to_owned()),
    ];
    for (row, (label, value)) in facts.iter().enumerate() {
        sheet.write_string_with_format(row as u32, 0, *label, &bold)?;
        sheet.write_string(row as u32, 1, value)?;
    }
    sheet.write_string_with_format(5, 0, "Period start", &bold)?;
    sheet.write_datetime_with_format(5, 1, date(account.period_start)?, &day)?;
    sheet.write_string_with_format(6, 0, "Period end", &bold)?;
    sheet.write_datetime_with_format(6, 1, date(account.period_end)?, &day)?;
    sheet.write_string_with_format(7, 0, "Opening balance", &bold)?;
    sheet.write_number_with_format(7, 1, account.opening.value(), &money)?;
    sheet.write_string_with_format(8, 0, "Closing balance", &bold)?;
    sheet.write_number_with_format(8, 1, account.closing().value(), &money)?;
    write_transactions(sheet, 10, &[account])?;
    workbook.save_to_buffer()
}
