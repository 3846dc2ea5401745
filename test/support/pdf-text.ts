import { PDFParse } from 'pdf-parse';

/** The text of a PDF as a reader would copy it (pdf.js via pdf-parse), pages in order. */
export async function pdfText(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}
