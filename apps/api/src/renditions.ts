import { applyDecorators, Get, StreamableFile } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Rendition } from '@ledgerkey/einvoicing';

/**
 * `GET :id/ubl`: the document as Peppol BIS Billing 3.0 UBL 2.1, a download in Swagger UI.
 * Refused with `422 einvoice_not_representable` (and the broken rules in `problems`) rather
 * than answered with a document a Peppol access point would reject.
 */
export function UblRoute(operationId: string, document: string): MethodDecorator {
  return applyDecorators(
    Get(':id/ubl'),
    ApiOperation({
      operationId,
      summary: `Download the ${document} as Peppol BIS Billing 3.0 UBL`,
      description:
        `The ${document} as UBL 2.1 XML that passes the EN 16931 and Peppol BIS 3 rules, with the ` +
        'seller details it was issued with. The same document always gives the same bytes.',
    }),
    ApiProduces('application/xml'),
    ApiOkResponse({
      description: 'UBL 2.1 XML (`Content-Disposition: attachment`)',
      content: { 'application/xml': { schema: { type: 'string' } } },
    }),
    ApiNotFoundResponse({ description: '`not_found`' }),
    ApiUnprocessableEntityResponse({
      description:
        '`einvoice_not_representable`: the company profile or the customer lacks what Peppol requires; ' +
        '`problems` lists `{ rule, message }` per broken EN 16931 / Peppol rule',
    }),
  );
}

/** `GET :id/pdf`: the document as a PDF a customer can read, a download in Swagger UI. */
export function PdfRoute(operationId: string, document: string): MethodDecorator {
  return applyDecorators(
    Get(':id/pdf'),
    ApiOperation({
      operationId,
      summary: `Download the ${document} as PDF`,
      description:
        'Seller and buyer, number, dates, lines, VAT per rate, totals and payment details. The same ' +
        'document always gives the same bytes.',
    }),
    ApiProduces('application/pdf'),
    ApiOkResponse({
      description: 'PDF (`Content-Disposition: attachment`)',
      content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
    }),
    ApiNotFoundResponse({ description: '`not_found`' }),
  );
}

/** A rendition as a download. */
export function downloadOf(rendition: Rendition): StreamableFile {
  return new StreamableFile(rendition.content, {
    type:
      rendition.contentType === 'application/xml' ? 'application/xml; charset=utf-8' : rendition.contentType,
    disposition: `attachment; filename="${rendition.fileName}"`,
    length: rendition.content.length,
  });
}
