\set lk_a random(10000000, 99999999)
\set lk_b random(1000, 9999)
\set lk_c random(1000, 9999)
\set lk_d random(100000000000, 999999999999)
START TRANSACTION;
SELECT c.*, i.request_digest
         FROM claim_idempotency_key('00000000-0000-4000-8000-000000000000', 'sales.invoices.create', ':lk_a-:lk_b-:lk_c-0000-:lk_d', '2026-12-03T17:10:45.608+00:00') c
         LEFT JOIN idempotency_records i
           ON i.company_id = '00000000-0000-4000-8000-000000000000' AND i.operation = 'sales.invoices.create' AND i.idempotency_key = ':lk_a-:lk_b-:lk_c-0000-:lk_d'
          AND c.state IN ('completed', 'failed_final');
WITH next AS (
         INSERT INTO document_sequences AS s (company_id, document_type, series, last_value)
          VALUES ('00000000-0000-4000-8000-000000000000', 'invoice', 'INV', 1)
          ON CONFLICT (company_id, document_type, series) DO UPDATE SET last_value = s.last_value + 1
          RETURNING last_value
       ), invoice AS (
         INSERT INTO invoices (id, company_id, series, sequence, number, status, order_id, currency,
                               issue_date, due_date, customer, notes, vat_breakdown, net_total,
                               vat_total, gross_total, created_at, seller, metadata)
         SELECT ':lk_a-:lk_b-:lk_c-0001-:lk_d', '00000000-0000-4000-8000-000000000000', 'INV', next.last_value, 'INV' || '-' || lpad(next.last_value::text, greatest(6, length(next.last_value::text)), '0'), 'issued', NULL,
                'EUR', '2026-12-03', NULL, '{"name":"UAB Bench","vatId":"LT100001234567","countryCode":"LT","address":null,"email":null}', NULL, '[{"vatRate":"21","netAmount":10002,"vatAmount":2100},{"vatRate":"9","netAmount":1500,"vatAmount":135}]', '11502', '2235', '13737', '2026-12-03T17:10:45.609Z', company_seller('00000000-0000-4000-8000-000000000000'), '{}'
           FROM next
         ON CONFLICT (company_id, order_id) WHERE order_id IS NOT NULL DO NOTHING
         RETURNING id, sequence, number, seller
       ), lines AS (
         INSERT INTO invoice_lines (invoice_id, company_id, position, description, quantity,
                                    unit_price, vat_rate, net_amount)
       SELECT invoice.id, '00000000-0000-4000-8000-000000000000', l.position, l.description, l.quantity, l.unit_price, l.vat_rate,
              l.net_amount
         FROM invoice,
              unnest('{"1","2"}'::int[], '{"Consulting","Book"}'::text[], '{"2","1"}'::numeric[], '{"5001","1500"}'::bigint[], '{"21","9"}'::numeric[],
                     '{"10002","1500"}'::bigint[]) AS l(position, description, quantity, unit_price, vat_rate, net_amount)
       )
       SELECT sequence, number, seller FROM invoice
\gset lk_seq_
WITH w0_entry AS (INSERT INTO journal_entries (id, company_id, currency, source_type, source_id, memo, posted_at,
                                          entry_date, line_count)
             VALUES (':lk_a-:lk_b-:lk_c-0002-:lk_d', '00000000-0000-4000-8000-000000000000', 'EUR', 'invoice',
                     ':lk_a-:lk_b-:lk_c-0001-:lk_d', 'Invoice INV-:lk_seq_sequence', '2026-12-03T17:10:45.609+00:00',
                     '2026-12-03',
                     cardinality('{"accounts_receivable","revenue","vat_payable"}'::text[]))
             RETURNING id),
w0_lines AS (INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
             SELECT entry.id, '00000000-0000-4000-8000-000000000000', l.line_no, l.account, l.debit, l.credit
               FROM w0_entry entry,
                    unnest('{"accounts_receivable","revenue","vat_payable"}'::text[], '{"13737","0","0"}'::bigint[],
                           '{"0","11502","2235"}'::bigint[]) WITH ORDINALITY
                      AS l(account, debit, credit, line_no)),
w1_next AS (INSERT INTO event_sequences AS s (company_id, last_position) VALUES ('00000000-0000-4000-8000-000000000000', 1)
           ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1
           RETURNING last_position),
w1_event AS (INSERT INTO events (id, company_id, position, type, data, created_at)
           SELECT ':lk_a-:lk_b-:lk_c-0003-:lk_d', '00000000-0000-4000-8000-000000000000', next.last_position, 'invoice.created', '{"object":{"id":":lk_a-:lk_b-:lk_c-0001-:lk_d","object":"invoice","number":"INV-:lk_seq_sequence","series":"INV","sequence": :lk_seq_sequence,"status":"issued","orderId":null,"currency":"EUR","issueDate":"2026-12-03","dueDate":null,"seller":{"legalName":"Bench 7000","vatId":null,"registrationNumber":null,"address":{"street":null,"city":null,"postalCode":null,"countryCode":"LT"},"iban":null,"email":null,"peppolId":null},"customer":{"name":"UAB Bench","vatId":"LT100001234567","countryCode":"LT","address":null,"email":null},"lines":[{"position":1,"description":"Consulting","quantity":"2","unitPrice":5001,"vatRate":"21","netAmount":10002},{"position":2,"description":"Book","quantity":"1","unitPrice":1500,"vatRate":"9","netAmount":1500}],"vatBreakdown":[{"vatRate":"21","netAmount":10002,"vatAmount":2100},{"vatRate":"9","netAmount":1500,"vatAmount":135}],"netTotal":11502,"vatTotal":2235,"grossTotal":13737,"creditedTotal":0,"paidTotal":0,"outstandingAmount":13737,"paymentStatus":"unpaid","creditStatus":"none","notes":null,"metadata":{},"createdAt":"2026-12-03T17:10:45.609Z"}}', '2026-12-03T17:10:45.609Z'
             FROM w1_next next
           RETURNING id, company_id, type),
w1_fan_out AS (SELECT fan_out_event(event.company_id, event.id, event.type) FROM w1_event event),
w2_record AS (INSERT INTO idempotency_records
               (company_id, operation, idempotency_key, fingerprint, state, response_status, response_headers,
                response_body, response_sealed, expires_at, created_at, updated_at, request_digest)
             VALUES ('00000000-0000-4000-8000-000000000000', 'sales.invoices.create', ':lk_a-:lk_b-:lk_c-0000-:lk_d', '\xb02e190109963bf5c089764c9c33c568576242318d59e4dea6798180558f2c73', 'completed', '201', '{"Content-Type":"application/json; charset=utf-8","Location":"/v1/sales/invoices/:lk_a-:lk_b-:lk_c-0001-:lk_d"}', '{"id":":lk_a-:lk_b-:lk_c-0001-:lk_d","object":"invoice","number":"INV-:lk_seq_sequence","series":"INV","sequence": :lk_seq_sequence,"status":"issued","orderId":null,"currency":"EUR","issueDate":"2026-12-03","dueDate":null,"seller":{"legalName":"Bench 7000","vatId":null,"registrationNumber":null,"address":{"street":null,"city":null,"postalCode":null,"countryCode":"LT"},"iban":null,"email":null,"peppolId":null},"customer":{"name":"UAB Bench","vatId":"LT100001234567","countryCode":"LT","address":null,"email":null},"lines":[{"position":1,"description":"Consulting","quantity":"2","unitPrice":5001,"vatRate":"21","netAmount":10002},{"position":2,"description":"Book","quantity":"1","unitPrice":1500,"vatRate":"9","netAmount":1500}],"vatBreakdown":[{"vatRate":"21","netAmount":10002,"vatAmount":2100},{"vatRate":"9","netAmount":1500,"vatAmount":135}],"netTotal":11502,"vatTotal":2235,"grossTotal":13737,"creditedTotal":0,"paidTotal":0,"outstandingAmount":13737,"paymentStatus":"unpaid","creditStatus":"none","notes":null,"metadata":{},"createdAt":"2026-12-03T17:10:45.609Z"}', 'false', '2026-12-04T17:10:45.613+00:00', '2026-12-03T17:10:45.613+00:00', '2026-12-03T17:10:45.613+00:00', '\x5c81216abc573fb82d7f8a232083ff008e045f19f9760cd86c4fb24d6b61794d'))
SELECT (SELECT count(*) FROM w1_fan_out) AS reads;
COMMIT;
