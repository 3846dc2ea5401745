import { join } from 'node:path';
import PDFDocument from 'pdfkit';
import { formatMinorUnits } from '@ledgerkey/money';
import type { SalesDocument } from './sales-document';

/**
 * DejaVu Sans (Bitstream Vera licence, permissive), shipped by the `dejavu-fonts-ttf` package:
 * it covers Lithuanian (ąčęėįšųūž) and Danish (æøå) letters, which the PDF standard fonts do not.
 * Embedded as a subset, with a ToUnicode map, so text can be extracted again.
 */
const FONT_DIRECTORY = join(require.resolve('dejavu-fonts-ttf/package.json'), '..', 'ttf');
const REGULAR = join(FONT_DIRECTORY, 'DejaVuSans.ttf');
const BOLD = join(FONT_DIRECTORY, 'DejaVuSans-Bold.ttf');

const PAGE_MARGIN = 50;
const PAGE_BOTTOM = 842 - PAGE_MARGIN; // A4 is 595 × 842 points
const COLUMNS = { position: 50, description: 75, quantity: 300, unitPrice: 355, vatRate: 435, net: 480 };

/**
 * Renders a sales invoice or credit note as a PDF a customer can read: seller and buyer, number,
 * dates, lines, VAT per rate, totals and payment details. The same document always renders to
 * the same bytes: creation date and metadata come from the document, never from the clock.
 */
export function writePdf(document: SalesDocument): Promise<Buffer> {
  const title = `${document.kind === 'invoice' ? 'Invoice' : 'Credit note'} ${document.number}`;
  const fixedDate = new Date(`${document.issueDate}T00:00:00.000Z`);
  const pdf = new PDFDocument({
    size: 'A4',
    margin: PAGE_MARGIN,
    info: {
      Title: title,
      Author: document.seller.legalName,
      Subject: title,
      Creator: 'ledgerkey',
      Producer: 'ledgerkey',
      CreationDate: fixedDate,
      ModDate: fixedDate,
    },
  });
  pdf.registerFont('regular', REGULAR);
  pdf.registerFont('bold', BOLD);
  const done = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  const money = (amount: number) => `${formatMinorUnits(amount, document.currency)} ${document.currency}`;

  pdf.font('bold').fontSize(18).text(title, PAGE_MARGIN, PAGE_MARGIN);
  pdf.moveDown(0.5);
  const facts: [string, string][] = [['Issue date', document.issueDate]];
  if (document.kind === 'invoice') {
    if (document.dueDate) facts.push(['Due date', document.dueDate]);
    if (document.orderId) facts.push(['Order', document.orderId]);
  } else {
    facts.push(['Credits invoice', `${document.invoice.number} of ${document.invoice.issueDate}`]);
    facts.push(['Reason', document.reason]);
  }
  facts.push(['Currency', document.currency]);
  pdf.fontSize(10);
  for (const [label, value] of facts) labelled(pdf, label, value);

  const partiesTop = pdf.y + 15;
  const seller = document.seller;
  party(pdf, 'Seller', PAGE_MARGIN, partiesTop, [
    seller.legalName,
    seller.address.street,
    [seller.address.postalCode, seller.address.city].filter(Boolean).join(' ') || null,
    seller.address.countryCode,
    seller.vatId ? `VAT id: ${seller.vatId}` : null,
    seller.registrationNumber ? `Registration no.: ${seller.registrationNumber}` : null,
    seller.email,
  ]);
  const sellerBottom = pdf.y;
  const buyer = document.buyer;
  party(pdf, 'Buyer', 310, partiesTop, [
    buyer.name,
    buyer.address,
    buyer.countryCode,
    buyer.vatId ? `VAT id: ${buyer.vatId}` : null,
    buyer.email,
  ]);
  pdf.y = Math.max(sellerBottom, pdf.y) + 20;

  lineTable(pdf, document);

  pdf.moveDown(1);
  ensureRoom(pdf, 40 + 15 * document.vatBreakdown.length);
  pdf.font('bold').text('VAT', PAGE_MARGIN, pdf.y);
  pdf.font('regular');
  for (const row of document.vatBreakdown) {
    const y = pdf.y;
    pdf.text(`${row.vatRate} %`, PAGE_MARGIN, y, { width: 100 });
    pdf.text(`net ${money(row.netAmount)}`, 160, y, { width: 170 });
    pdf.text(`VAT ${money(row.vatAmount)}`, 340, y, { width: 200 });
  }

  pdf.moveDown(1);
  ensureRoom(pdf, 60);
  totalLine(pdf, 'Net total', money(document.netTotal), 'regular');
  totalLine(pdf, 'VAT total', money(document.vatTotal), 'regular');
  totalLine(
    pdf,
    document.kind === 'invoice' ? 'Total due' : 'Total credited',
    money(document.grossTotal),
    'bold',
  );

  pdf.moveDown(1);
  ensureRoom(pdf, 60);
  if (document.kind === 'invoice') {
    pdf.font('bold').text('Payment', PAGE_MARGIN, pdf.y);
    pdf.font('regular');
    if (seller.iban) labelled(pdf, 'IBAN', seller.iban);
    labelled(pdf, 'Due date', document.dueDate ?? 'on receipt');
    labelled(pdf, 'Reference', document.number);
  }
  if (document.note) {
    pdf.moveDown(0.5);
    pdf.font('regular').text(document.note, PAGE_MARGIN, pdf.y, { width: 495 });
  }
  pdf.end();
  return done;
}

function labelled(pdf: PDFKit.PDFDocument, label: string, value: string): void {
  const y = pdf.y;
  pdf.font('bold').text(`${label}:`, PAGE_MARGIN, y, { width: 110 });
  pdf.font('regular').text(value, PAGE_MARGIN + 115, y, { width: 380 });
}

function party(
  pdf: PDFKit.PDFDocument,
  heading: string,
  x: number,
  y: number,
  lines: (string | null)[],
): void {
  pdf.font('bold').fontSize(11).text(heading, x, y, { width: 235 });
  pdf.font('regular').fontSize(10);
  for (const line of lines) if (line) pdf.text(line, x, pdf.y, { width: 235 });
}

function lineTable(pdf: PDFKit.PDFDocument, document: SalesDocument): void {
  const header = (): void => {
    const y = pdf.y;
    pdf.font('bold').fontSize(9);
    pdf.text('#', COLUMNS.position, y);
    pdf.text('Description', COLUMNS.description, y);
    pdf.text('Qty', COLUMNS.quantity, y, { width: 50, align: 'right' });
    pdf.text('Unit price', COLUMNS.unitPrice, y, { width: 75, align: 'right' });
    pdf.text('VAT %', COLUMNS.vatRate, y, { width: 40, align: 'right' });
    pdf.text('Net', COLUMNS.net, y, { width: 65, align: 'right' });
    pdf
      .moveTo(PAGE_MARGIN, pdf.y + 2)
      .lineTo(545, pdf.y + 2)
      .stroke();
    pdf.y += 6;
    pdf.font('regular');
  };
  header();
  for (const line of document.lines) {
    const height = pdf.heightOfString(line.description, { width: 220 });
    if (pdf.y + height > PAGE_BOTTOM) {
      pdf.addPage();
      header();
    }
    const y = pdf.y;
    pdf.text(String(line.position), COLUMNS.position, y);
    pdf.text(line.quantity, COLUMNS.quantity, y, { width: 50, align: 'right' });
    pdf.text(formatMinorUnits(line.unitPrice, document.currency), COLUMNS.unitPrice, y, {
      width: 75,
      align: 'right',
    });
    pdf.text(line.vatRate, COLUMNS.vatRate, y, { width: 40, align: 'right' });
    pdf.text(formatMinorUnits(line.netAmount, document.currency), COLUMNS.net, y, {
      width: 65,
      align: 'right',
    });
    pdf.text(line.description, COLUMNS.description, y, { width: 220 });
    pdf.y = Math.max(pdf.y, y + height) + 3;
  }
  pdf
    .fontSize(10)
    .text(`Amounts in ${document.currency}; net = quantity × unit price.`, PAGE_MARGIN, pdf.y + 2);
}

function totalLine(pdf: PDFKit.PDFDocument, label: string, value: string, font: 'regular' | 'bold'): void {
  const y = pdf.y;
  pdf.font(font).text(label, 340, y, { width: 100 });
  pdf.text(value, 440, y, { width: 105, align: 'right' });
}

function ensureRoom(pdf: PDFKit.PDFDocument, height: number): void {
  if (pdf.y + height > PAGE_BOTTOM) {
    pdf.addPage();
    pdf.y = PAGE_MARGIN;
  }
}
