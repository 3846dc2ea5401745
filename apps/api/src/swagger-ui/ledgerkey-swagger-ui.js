/*
 * ledgerkey's Swagger UI plugin, served at /docs/ledgerkey-swagger-ui.js (no CDN) to /docs and
 * /docs/operator. For people who try the API in the browser rather than read HTTP headers:
 *
 * - a "New key" button beside every Idempotency-Key field: a fresh UUID, i.e. a new operation;
 * - a banner over an answer that is a replay (`Idempotent-Replayed: true`): nothing ran again;
 * - after a stored rejection (a business rule said no, e.g. `409 order_already_invoiced`, stored
 *   under the key and replayed to every retry) and after `422 idempotency_key_reused`, the UI says
 *   that a changed body needs a new key.
 *
 * Swagger UI plugins must be passed when the UI is created, by the init script Nest generates; this
 * script loads before it runs (window.onload) and wraps SwaggerUIBundle so every UI on the page gets
 * the plugin. Plain browser JavaScript on Swagger UI's own React (system.React): no build step.
 */
(function () {
  'use strict';

  var HEADER = 'Idempotency-Key';

  function newIdempotencyKey() {
    if (window.crypto && typeof window.crypto.randomUUID === 'function') return window.crypto.randomUUID();
    // randomUUID needs a secure context (https or localhost); getRandomValues does not.
    var bytes = window.crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    var hex = Array.prototype.map
      .call(bytes, function (b) {
        return (b + 0x100).toString(16).slice(1);
      })
      .join('');
    return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
  }

  function headerOf(headers, name) {
    var wanted = name.toLowerCase();
    for (var key in headers) {
      if (Object.prototype.hasOwnProperty.call(headers, key) && key.toLowerCase() === wanted) {
        var value = headers[key];
        return Array.isArray(value) ? value.join(', ') : String(value);
      }
    }
    return undefined;
  }

  function problemCodeOf(text) {
    try {
      var body = JSON.parse(text);
      return body && typeof body.code === 'string' ? body.code : undefined;
    } catch (_error) {
      return undefined;
    }
  }

  /** What to tell the user about an answer to a request that carried an Idempotency-Key, or null. */
  function noticeFor(status, headers, text, key) {
    var replayed = headerOf(headers, 'Idempotent-Replayed') === 'true';
    var stored = headerOf(headers, 'Idempotency-Key-Expires');
    var code = problemCodeOf(text);
    var keyText = key ? ' "' + key + '"' : '';
    if (status === 422 && code === 'idempotency_key_reused') {
      return {
        kind: 'rejection',
        title: 'This Idempotency-Key was already used with a different body; nothing ran.',
        text:
          'A key names one operation and its body. Changing the body needs a new key: press "New key" ' +
          'beside the Idempotency-Key field, then Execute. To retry the original operation, send its ' +
          'original body with this key.',
      };
    }
    if (status === 409 && code === 'idempotency_key_in_use') {
      return {
        kind: 'info',
        title: 'The first request with this key is still running.',
        text: 'Execute again in a moment, with the same key and body: you get its answer.',
      };
    }
    if (status >= 400 && status < 500 && stored) {
      return {
        kind: 'rejection',
        title: replayed
          ? 'Replayed: the stored answer of an earlier request with Idempotency-Key' + keyText + '.'
          : 'This rejection is stored under Idempotency-Key' + keyText + '.',
        text:
          'Every retry with this key and body gets this answer again (until ' +
          stored +
          '). Changing the body needs a new key: correct the body, press "New key" beside the ' +
          'Idempotency-Key field, then Execute.',
      };
    }
    if (replayed) {
      return {
        kind: 'replay',
        title: 'Replayed: the stored answer of an earlier request with Idempotency-Key' + keyText + '.',
        text:
          'Nothing was created or charged again. To make another one, press "New key" beside the ' +
          'Idempotency-Key field, then Execute.',
      };
    }
    return null;
  }

  function LedgerkeyPlugin(system) {
    var React = system.React;
    var h = React.createElement;
    return {
      wrapComponents: {
        // The input of one parameter; ParameterRow passes the parameter's name as `description`.
        JsonSchemaForm: function (Original) {
          return function IdempotencyKeyForm(props) {
            var original = h(Original, props);
            if (props.description !== HEADER || props.disabled) return original;
            return h(
              'div',
              { className: 'ledgerkey-idempotency-key' },
              original,
              h(
                'button',
                {
                  type: 'button',
                  className: 'btn ledgerkey-new-key',
                  title: 'A fresh UUID: a new operation. Keep the key to retry the same one.',
                  onClick: function () {
                    props.onChange(newIdempotencyKey());
                  },
                },
                'New key',
              ),
            );
          };
        },
        liveResponse: function (Original) {
          return function IdempotencyNotice(props) {
            var original = h(Original, props);
            var response = props.response;
            if (!response) return original;
            var request = props.specSelectors.requestFor(props.path, props.method);
            var requestHeaders = request && request.get('headers');
            var key =
              requestHeaders && requestHeaders.toJS ? headerOf(requestHeaders.toJS(), HEADER) : undefined;
            var headers = response.get('headers');
            var notice = noticeFor(
              Number(response.get('status')),
              headers && headers.toJS ? headers.toJS() : {},
              response.get('text') || '',
              key,
            );
            if (!notice) return original;
            return h(
              'div',
              null,
              h(
                'div',
                { className: 'ledgerkey-notice ledgerkey-notice--' + notice.kind, role: 'status' },
                h('strong', null, notice.title),
                ' ',
                notice.text,
              ),
              original,
            );
          };
        },
      },
    };
  }

  var style = document.createElement('style');
  style.textContent =
    '.swagger-ui .ledgerkey-idempotency-key{display:flex;gap:8px;align-items:flex-start}' +
    '.swagger-ui .ledgerkey-idempotency-key input{flex:1}' +
    '.swagger-ui .ledgerkey-new-key{margin:5px 0;white-space:nowrap}' +
    '.swagger-ui .ledgerkey-notice{margin:10px 0;padding:10px 14px;border-radius:4px;border:1px solid;' +
    'font-family:sans-serif;font-size:14px;line-height:1.4}' +
    '.swagger-ui .ledgerkey-notice--replay{background:#eef6ff;border-color:#4990e2;color:#1b3c66}' +
    '.swagger-ui .ledgerkey-notice--info{background:#f6f6f6;border-color:#999;color:#333}' +
    '.swagger-ui .ledgerkey-notice--rejection{background:#fff4e5;border-color:#e59400;color:#5c3b00}';
  document.head.appendChild(style);

  var SwaggerUIBundle = window.SwaggerUIBundle;
  if (typeof SwaggerUIBundle !== 'function') return;
  window.SwaggerUIBundle = Object.assign(function (options) {
    return SwaggerUIBundle(
      Object.assign({}, options, { plugins: (options.plugins || []).concat([LedgerkeyPlugin]) }),
    );
  }, SwaggerUIBundle);
})();
