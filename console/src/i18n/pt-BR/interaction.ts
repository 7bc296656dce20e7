import type { WordsOf } from '../../ui/i18n.js'
import type { interaction as en } from '../en/interaction.js'

export const interaction: WordsOf<typeof en> = {
  'interaction.title': '{title} · Tessera',
  'interaction.signInTo': 'Entrar em {name}',
  'interaction.ended': 'Este login terminou',
  'interaction.expired':
    'Este pedido de login expirou ou já foi usado. Volte ao aplicativo e comece de novo.',
  'interaction.cancel': 'Cancelar e voltar para {name}',
  'interaction.signingIn': 'Entrando em {name}',
  'interaction.lead': 'com sua conta no tenant {tenant}.',
  'interaction.what': 'o pedido de login',
  'consent.asks': '{name} pede acesso à sua conta',
  'consent.as': 'Conectado como {who}',
  'consent.able': 'Ele poderá',
  'consent.allow': 'Permitir',
  'consent.deny': 'Negar',
  'consent.withdraw': 'Você pode retirar este acesso depois, em Conta, no console.',
  'scope.openid': 'Saber quem você é: seu id de usuário neste tenant',
  'scope.profile': 'Ver seu nome de usuário e quando seu perfil mudou pela última vez',
  'scope.email': 'Ver seu endereço de e-mail e se ele está confirmado',
  'scope.roles': 'Ver seus papéis e permissões neste tenant',
  'scope.offline_access':
    'Continuar conectado enquanto você estiver ausente: ele pode renovar o acesso sem perguntar',
  'scope.apiOf': 'Usar “{scope}” em {resource}',
  'scope.api': 'Usar “{scope}”',
}
