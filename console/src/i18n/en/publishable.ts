// The words of screens/PublishableKeyPage.tsx.
export const publishable = {
  'pk.title': 'Publishable key {name}',
  'pk.help':
    'A publishable key lets a web page of yours sign users up straight from the browser, behind a proof of work. It is public: it goes in the page, and it is good for nothing but sign-up.',
  'pk.copyName': 'Copy {name}',
  'pk.rolesHelp':
    'Every user who signs up with the key gets them, never more. Offered are the roles you may give: none with an administration permission (users, roles, tenants, keys), none above your own level.',
  'pk.originCount': 'Give from 1 to {max} allowed origins ({count} given).',
  'pk.edit': 'Edit the key',
  'pk.new': 'New publishable key',
  'pk.originsHelp':
    'The exact origins of the pages that sign users up, one a line or comma separated, 1 to {max}: https://www.example.com, or http:// on a loopback host (http://localhost:8080).',
  'pk.perHourHelp':
    'At most this many sign-ups an hour with this key (1 to {max}), besides {perAddress} an hour from one address.',
  'snippet.help':
    'Paste it into a page served from one of the key’s allowed origins, with a copy of the ALTCHA widget’s script beside it (the comment at its top says how). Visitors then sign up with a proof of work, straight from their browser, and get the key’s default roles.',
  'pk.origins': 'Allowed origins',
  'pk.perHour': 'Sign-ups per hour',
  'pk.warning': 'Sign-ups with this key stop at once.',
  'pk.revoked': 'Revoked',
  'pk.list': 'Publishable keys',
  'pk.create': 'Create publishable key',
  'pk.what': 'publishable keys',
  'pk.none': 'No publishable key yet.',
  'pk.region': 'Publishable keys, scrollable',
  'pk.rolesNeedRead': 'Listing the roles needs roles:read; only the key’s own are shown.',
  'snippet.title': 'Sign-up snippet',
  'snippet.region': 'HTML of the sign-up snippet',
  'snippet.copy': 'Copy snippet',
  'pk.revokeHelp': 'Sign-ups with the key are refused at once; pages that carry it stop working.',
} as const
